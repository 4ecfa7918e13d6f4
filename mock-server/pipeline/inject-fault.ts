import { setTimeout as sleep } from 'node:timers/promises';
import { ERROR_CATALOGUE, type ErrorCode, GatewayError } from '../errors.ts';
import type { FaultTarget } from '../faults.ts';
import type { JournalNote } from '../journal.ts';
import { formatRetryAfter } from '../limits/rate-limiter.ts';
import type { Runtime } from '../runtime.ts';

const CODE_BY_STATUS: Record<500 | 502 | 503 | 504, ErrorCode> = {
  500: 'internal_error',
  502: 'upstream_error',
  503: 'upstream_unavailable',
  504: 'upstream_timeout',
};

/**
 * The fault stage, where a real gateway would call its backend: a due fault answers a 5xx (with or
 * without Retry-After), waits (real time) before going on, or returns `Response.error()`, which every
 * adapter turns into a dropped connection.
 */
export async function injectFault(
  runtime: Runtime,
  target: FaultTarget,
  agentId: string | undefined,
  note: JournalNote,
): Promise<Response | undefined> {
  const fault = runtime.faults.strike(target, agentId);
  if (!fault) return undefined;
  note.fault = fault.id;
  if (fault.kind === 'delay') {
    await sleep(fault.delay_ms);
    return undefined;
  }
  if (fault.kind === 'drop') return Response.error();
  const code = CODE_BY_STATUS[fault.status];
  const headers: Record<string, string> = {};
  if (fault.retry_after !== undefined) {
    const now = runtime.clock.now();
    headers['retry-after'] = formatRetryAfter(
      fault.retry_after * 1000,
      now,
      runtime.config.rate_limits.retry_after,
    );
    headers.date = new Date(now).toUTCString();
    note.retry_after = headers['retry-after'];
    note.retry_after_ms = fault.retry_after * 1000;
  }
  throw new GatewayError(code, {
    message: `${ERROR_CATALOGUE[code].message} (injected fault ${fault.id})`,
    details: { fault: fault.id },
    headers,
  });
}
