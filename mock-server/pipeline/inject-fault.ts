import { setTimeout as sleep } from 'node:timers/promises';
import { ERROR_CATALOGUE, type ErrorCode, GatewayError } from '../errors.ts';
import { formatRetryAfter } from '../limits/rate-limiter.ts';
import type { Fault, FaultTarget } from '../scenarios/faults.ts';
import type { Answer, CallContext } from './context.ts';
import { dropConnection, httpDate } from './respond.ts';

const CODE_BY_STATUS: Record<500 | 502 | 503 | 504, ErrorCode> = {
  500: 'internal_error',
  502: 'upstream_error',
  503: 'upstream_unavailable',
  504: 'upstream_timeout',
};

/**
 * The fault stage, where a real gateway would call its backend: a due fault answers a 5xx (with or
 * without Retry-After), waits (real time) before going on, or drops the connection, which every adapter
 * carries out its own way (a TCP reset on the Node server, a network error under msw and fetch).
 * Nothing is armed most of the time: then it costs one length check and no tick.
 */
export function injectFault(
  ctx: CallContext,
  target: FaultTarget,
  agentId: string | undefined,
): Answer | undefined | Promise<Answer | undefined> {
  const { faults, shared } = ctx.runtime;
  if (shared) {
    // Strikes are counted in the store, so `count` and `every` hold across instances.
    const candidates = faults.matching(target, agentId);
    if (candidates.length === 0) return undefined;
    return shared.faults.strike(candidates, shared.limits.epoch).then(
      (fault) => {
        if (!fault) return undefined;
        // Spent: disarmed here, and on the other instances through the admin snapshot.
        if (fault.count !== undefined && fault.fired >= fault.count) {
          faults.remove(fault.id);
          ctx.runtime.afterFaultSpent?.();
        }
        return answerFault(ctx, fault);
      },
      (error) => {
        throw shared.connection.unavailable(error);
      },
    );
  }
  const fault = faults.strike(target, agentId);
  if (!fault) return undefined;
  return answerFault(ctx, fault);
}

/** What a fault that struck does to the request: a wait, a dropped connection, or a 5xx. */
function answerFault(ctx: CallContext, fault: Fault): Answer | undefined | Promise<Answer | undefined> {
  ctx.note.fault = fault.id;
  if (fault.kind === 'delay') return sleep(fault.delay_ms).then(() => undefined);
  if (fault.kind === 'drop') return dropConnection();
  const code = CODE_BY_STATUS[fault.status];
  const headers: Record<string, string> = {};
  if (fault.retry_after !== undefined) {
    const now = ctx.runtime.clock.now();
    headers['retry-after'] = formatRetryAfter(
      fault.retry_after * 1000,
      now,
      ctx.runtime.config.rate_limits.retry_after,
    );
    headers.date = httpDate(now);
    ctx.note.retry_after = headers['retry-after'];
    ctx.note.retry_after_ms = fault.retry_after * 1000;
  }
  throw new GatewayError(code, {
    message: `${ERROR_CATALOGUE[code].message} (injected fault ${fault.id})`,
    details: { fault: fault.id },
    headers,
  });
}
