import type { ResolvedConfig } from '../config/load-config.ts';
import type { Operation } from '../config/schema.ts';
import { GatewayError } from '../errors.ts';
import type { CallContext } from '../http/context.ts';
import { httpDate } from '../http/respond.ts';
import type { Identity } from '../identity/identity-provider.ts';
import type { IdentityVerifier } from '../identity/verifier.ts';
import {
  type AdmitResult,
  formatRetryAfter,
  type RuleOutcome,
  rateLimitHeaders,
  waitSeconds,
} from '../limits/rate-limiter.ts';
import { andThen, type MaybePromise } from '../maybe-promise.ts';
import type { StatePort } from '../store/state-port.ts';
import { refusedToken } from './identify.ts';

/** An admitted request: headers to add to its response, and the in-flight slot to give back. */
export interface Admission {
  headers: Record<string, string>;
  release(): void;
}

/** What the limits stage uses: the limits config, the state port's limits and clock, the verifier's IdP link. */
export interface AdmitDeps {
  readonly config: Pick<ResolvedConfig, 'rate_limits'>;
  readonly state: Pick<StatePort, 'limits' | 'clock'>;
  readonly verifier: Pick<IdentityVerifier, 'idpBaseUrl'>;
}

/**
 * The limits stage (spec sections 7 and 8): the agent's concurrency limit, then every rate-limit rule that
 * applies, decided by the state port in one step (on a shared store, one round trip that also checks the
 * token's generation: a revocation made through any instance). Over a limit: 429 rate_limited; rate limits
 * say when to retry (Retry-After, truthful), the concurrency limit does not (it clears when a request
 * finishes, not at a time). In memory it answers without a promise.
 */
export function admit(
  deps: AdmitDeps,
  ctx: CallContext,
  identity: Identity,
  operation: Operation,
): MaybePromise<Admission> {
  const maxInFlight = deps.config.rate_limits.concurrency.per_agent;
  const now = deps.state.clock.now();
  return andThen(deps.state.limits.admit(identity, operation, now, maxInFlight), (decision) => {
    const agentId = identity.agentId;
    if (decision.kind === 'revoked') throw refusedToken(ctx, 'revoked', agentId, deps.verifier);
    if (decision.kind === 'concurrency')
      throw overConcurrency(ctx, agentId, decision.inFlight, maxInFlight ?? decision.inFlight);
    const headers = decided(ctx, deps, decision.result, now);
    ctx.note.in_flight = decision.inFlight;
    return { headers, release: decision.release };
  });
}

/** 429 for an agent at its concurrency limit (no Retry-After: a slot frees when a request ends). */
function overConcurrency(ctx: CallContext, agentId: string, inFlight: number, limit: number): GatewayError {
  ctx.note.limit = { rule: 'concurrency', scope: 'agent', key: agentId };
  return new GatewayError('rate_limited', {
    message: `Agent ${agentId} already has ${inFlight} requests in flight (limit ${limit}): reduce concurrency and retry with backoff.`,
    details: { reason: 'concurrency', in_flight: inFlight, limit },
  });
}

/** The RateLimit headers of an admitted request; a refused one is thrown as 429 with a truthful Retry-After. */
function decided(
  ctx: CallContext,
  deps: AdmitDeps,
  result: AdmitResult,
  now: number,
): Record<string, string> {
  const { note } = ctx;
  const { config } = deps;
  const headers = config.rate_limits.headers ? rateLimitHeaders(result.outcomes) : {};
  if (result.outcomes.length > 0) note.quota = quotaOf(result.outcomes);
  if (result.allowed) return headers;
  const { rule, key } = result.blocking;
  const retryAfter = formatRetryAfter(result.retryAfterMs, now, config.rate_limits.retry_after);
  const seconds = waitSeconds(result.retryAfterMs);
  note.limit = { rule: rule.name, scope: rule.scope, key };
  note.retry_after = retryAfter;
  note.retry_after_ms = result.retryAfterMs;
  throw new GatewayError('rate_limited', {
    message: `Rate limit "${rule.name}" (${rule.limit} per ${rule.window_seconds} s, per ${rule.scope}) exceeded: retry after ${seconds} s, with backoff and jitter.`,
    details: {
      reason: 'rate',
      rule: rule.name,
      scope: rule.scope,
      limit: rule.limit,
      window_seconds: rule.window_seconds,
      retry_after_seconds: seconds,
    },
    // Date on the gateway clock, so an HTTP-date Retry-After can be read against it (virtual time).
    headers: { 'retry-after': retryAfter, date: httpDate(now), ...headers },
  });
}

/**
 * What each rule had left, for the journal (a loop: this runs on every request a rule counts). Made at its
 * exact length: the entry holds it until it is overwritten, and an array grown by `push` holds 17 slots.
 */
function quotaOf(outcomes: readonly RuleOutcome[]) {
  const quota = new Array<{ rule: string; key: string; limit: number; remaining: number }>(outcomes.length);
  for (let i = 0; i < outcomes.length; i++) {
    const o = outcomes[i] as RuleOutcome;
    quota[i] = { rule: o.rule.name, key: o.key, limit: o.rule.limit, remaining: o.remaining };
  }
  return quota;
}
