import type { Operation } from '../config/schema.ts';
import { GatewayError } from '../errors.ts';
import type { Identity } from '../identity/identity-provider.ts';
import { formatRetryAfter, type RuleOutcome, rateLimitHeaders } from '../limits/rate-limiter.ts';
import type { CallContext } from './context.ts';
import { httpDate } from './respond.ts';

/** An admitted request: headers to add to its response, and the in-flight slot to give back. */
export interface Admission {
  headers: Record<string, string>;
  release(): void;
}

/**
 * The limits stage (spec sections 7 and 8): the agent's concurrency limit, then every rate-limit rule that
 * applies. Over a limit: 429 rate_limited; rate limits say when to retry (Retry-After, truthful), the
 * concurrency limit does not (it clears when a request finishes, not at a time).
 */
export function admit(ctx: CallContext, identity: Identity, operation: Operation): Admission {
  const { note } = ctx;
  const { config, clock, concurrency, limiter } = ctx.runtime;
  const agentId = identity.agentId;
  const maxInFlight = config.rate_limits.concurrency.per_agent;
  const inFlight = concurrency.current(agentId);
  if (maxInFlight != null && inFlight >= maxInFlight) {
    note.limit = { rule: 'concurrency', scope: 'agent', key: agentId };
    throw new GatewayError('rate_limited', {
      message: `Agent ${agentId} already has ${inFlight} requests in flight (limit ${maxInFlight}): reduce concurrency and retry with backoff.`,
      details: { reason: 'concurrency', in_flight: inFlight, limit: maxInFlight },
    });
  }

  const now = clock.now();
  const result = limiter.admit(identity, operation, now);
  const headers = config.rate_limits.headers ? rateLimitHeaders(result.outcomes) : {};
  if (result.outcomes.length > 0) note.quota = quotaOf(result.outcomes);
  if (!result.allowed) {
    const { rule, key } = result.blocking;
    const retryAfter = formatRetryAfter(result.retryAfterMs, now, config.rate_limits.retry_after);
    const seconds = Math.ceil(result.retryAfterMs / 1000);
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
  note.in_flight = concurrency.enter(agentId);
  return { headers, release: () => concurrency.leave(agentId) };
}

/** What each rule had left, for the journal (a loop: this runs on every request a rule counts). */
function quotaOf(outcomes: readonly RuleOutcome[]) {
  const quota: { rule: string; key: string; limit: number; remaining: number }[] = [];
  for (const o of outcomes)
    quota.push({ rule: o.rule.name, key: o.key, limit: o.rule.limit, remaining: o.remaining });
  return quota;
}
