import type { Gateway } from './gateway.ts';

/**
 * Whether `value` is a gateway made by `createGateway`, rather than another fetch handler or something handed
 * by mistake: what the msw adapter tracks per test and what the matchers grade (both read its journal, its
 * runtime's state and its reports). Kept apart from gateway.ts so the test helpers can ask without loading
 * the gateway.
 *
 * @example
 * isGateway(createGateway()); // true
 * isGateway({ fetch: async () => new Response() }); // false
 */
export const isGateway = (value: unknown): value is Gateway =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Gateway).runtime === 'object' &&
  typeof (value as Gateway).clientReport === 'function' &&
  typeof (value as Gateway).readClientReport === 'function' &&
  typeof (value as Gateway).journal?.list === 'function';
