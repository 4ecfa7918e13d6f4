import type { FetchHandler } from '../../mock-server/adapters/node-server.ts';
import { call } from './call.ts';

/*
 * The extra tool the extra-tool tests declare in their configs (`web.extract` at /v1/web/extract, verified
 * tier), and the fault they arm on it through the admin API.
 */

/** A call of the extra tool `web.extract`. */
export const extract = (target: FetchHandler | string, token: string) =>
  call(target, 'POST', '/v1/web/extract', { token, body: { url: 'https://a.example/' } });

/** One 502 on `web.extract`: the body of POST /__admin/faults. */
export const EXTRACT_502_ONCE = {
  match: { operation: 'web.extract' },
  kind: 'status',
  status: 502,
  count: 1,
} as const;
