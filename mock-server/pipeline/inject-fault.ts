import { setTimeout as sleep } from 'node:timers/promises';
import type { ResolvedConfig } from '../config/load-config.ts';
import { ERROR_CATALOGUE, type ErrorCode, GatewayError } from '../errors.ts';
import type { Answer, CallContext } from '../http/context.ts';
import { dropConnection, httpDate } from '../http/respond.ts';
import { formatRetryAfter } from '../limits/rate-limiter.ts';
import { andThen, type MaybePromise } from '../maybe-promise.ts';
import type { Fault, FaultTarget } from '../scenarios/faults.ts';
import type { StatePort } from '../store/state-port.ts';

const CODE_BY_STATUS: Record<500 | 502 | 503 | 504, ErrorCode> = {
  500: 'internal_error',
  502: 'upstream_error',
  503: 'upstream_unavailable',
  504: 'upstream_timeout',
};

/** What the fault stage uses: the state port's fault strikes and clock, the Retry-After format. */
export interface InjectFaultDeps {
  readonly config: { readonly rate_limits: Pick<ResolvedConfig['rate_limits'], 'retry_after'> };
  readonly state: Pick<StatePort, 'faults' | 'clock'>;
}

/**
 * The fault stage, where a real gateway would call its backend: a due fault answers a 5xx (with or
 * without Retry-After), waits (real time) before going on, or drops the connection, which every adapter
 * carries out its own way (a TCP reset on the Node server, a network error under msw and fetch).
 * Nothing is armed most of the time: then it costs one length check and no tick.
 */
export function injectFault(
  deps: InjectFaultDeps,
  ctx: CallContext,
  target: FaultTarget,
  agentId: string | undefined,
): MaybePromise<Answer | undefined> {
  const struck = deps.state.faults.strike(target, agentId);
  if (struck === undefined) return undefined;
  return andThen(struck, (fault) => (fault ? answerFault(deps, ctx, fault) : undefined));
}

/** What a fault that struck does to the request: a wait, a dropped connection, or a 5xx. */
function answerFault(
  deps: InjectFaultDeps,
  ctx: CallContext,
  fault: Fault,
): MaybePromise<Answer | undefined> {
  ctx.note.fault = fault.id;
  if (fault.kind === 'delay') return sleep(fault.delay_ms).then(() => undefined);
  if (fault.kind === 'drop') return dropConnection();
  const code = CODE_BY_STATUS[fault.status];
  const headers: Record<string, string> = {};
  if (fault.retry_after !== undefined) {
    const now = deps.state.clock.now();
    headers['retry-after'] = formatRetryAfter(
      fault.retry_after * 1000,
      now,
      deps.config.rate_limits.retry_after,
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
