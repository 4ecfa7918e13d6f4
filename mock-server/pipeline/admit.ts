import type { Operation } from '../config/schema.ts';
import { GatewayError } from '../errors.ts';
import type { Identity } from '../identity/identity-provider.ts';
import {
  type AdmitResult,
  formatRetryAfter,
  type RuleOutcome,
  rateLimitHeaders,
  waitSeconds,
} from '../limits/rate-limiter.ts';
import type { SharedStore } from '../store/shared-store.ts';
import type { CallContext } from './context.ts';
import { refusedToken } from './identify.ts';
import { httpDate } from './respond.ts';

/** An admitted request: headers to add to its response, and the in-flight slot to give back. */
export interface Admission {
  headers: Record<string, string>;
  release(): void;
}

/**
 * The limits stage (spec sections 7 and 8): the agent's concurrency limit, then every rate-limit rule that
 * applies. Over a limit: 429 rate_limited; rate limits say when to retry (Retry-After, truthful), the
 * concurrency limit does not (it clears when a request finishes, not at a time). In memory it answers
 * without a promise; with a shared store, one round trip decides everything (`admitShared`).
 */
export function admit(
  ctx: CallContext,
  identity: Identity,
  operation: Operation,
): Admission | Promise<Admission> {
  const { config, clock, concurrency, limiter, shared } = ctx.runtime;
  if (shared) return admitShared(ctx, identity, operation, shared);
  const agentId = identity.agentId;
  const maxInFlight = config.rate_limits.concurrency.per_agent;
  const inFlight = concurrency.current(agentId);
  if (maxInFlight != null && inFlight >= maxInFlight)
    throw overConcurrency(ctx, agentId, inFlight, maxInFlight);
  const now = clock.now();
  const headers = decided(ctx, limiter.admit(identity, operation, now), now);
  ctx.note.in_flight = concurrency.enter(agentId);
  return { headers, release: () => concurrency.leave(agentId) };
}

/**
 * The limits stage on the shared store: the token's generation (a revocation made through any instance),
 * the concurrency lease and the rate-limit rules, decided atomically by one script. A store that does not
 * answer is 503 state_store_unavailable: never a decision made from this process's counts alone.
 */
async function admitShared(
  ctx: CallContext,
  identity: Identity,
  operation: Operation,
  shared: SharedStore,
): Promise<Admission> {
  const { config, clock, verifier } = ctx.runtime;
  const agentId = identity.agentId;
  const maxInFlight = config.rate_limits.concurrency.per_agent;
  const now = clock.now();
  let decision: Awaited<ReturnType<SharedStore['limits']['admit']>>;
  try {
    decision = await shared.limits.admit(
      config.rate_limits.rules,
      // A token from a remote identity provider carries no generation: revocation is that provider's.
      { agentId, tier: identity.tier, generation: identity.generation ?? Number.MAX_SAFE_INTEGER },
      operation,
      now,
      maxInFlight,
    );
  } catch (error) {
    throw shared.connection.unavailable(error);
  }
  if (decision.kind === 'revoked') throw refusedToken(ctx, 'revoked', agentId, verifier);
  if (decision.kind === 'concurrency')
    throw overConcurrency(ctx, agentId, decision.inFlight, maxInFlight ?? decision.inFlight);
  const headers = decided(ctx, decision.result, now);
  ctx.note.in_flight = decision.inFlight;
  const lease = decision.lease as string;
  return { headers, release: () => shared.limits.release(agentId, lease) };
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
function decided(ctx: CallContext, result: AdmitResult, now: number): Record<string, string> {
  const { note } = ctx;
  const { config } = ctx.runtime;
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

/** What each rule had left, for the journal (a loop: this runs on every request a rule counts). */
function quotaOf(outcomes: readonly RuleOutcome[]) {
  const quota: { rule: string; key: string; limit: number; remaining: number }[] = [];
  for (const o of outcomes)
    quota.push({ rule: o.rule.name, key: o.key, limit: o.rule.limit, remaining: o.remaining });
  return quota;
}
