import { type BoundedMap, createBoundedMap } from '../bounded-map.ts';
import type { Operation, RateLimitRule } from '../config/schema.ts';
import { createLimitState, type Decision, type LimitState } from './algorithms.ts';

/** Who is asking, as far as limits care. */
export interface LimitSubject {
  agentId: string;
  tier: string;
}

/** A rule's verdict on one request, with what the RateLimit headers report. */
export interface RuleOutcome extends Decision {
  rule: RateLimitRule;
  /** The scope key the rule counted this request under, e.g. `agent-early` or `agent-early|web.search`. */
  key: string;
}

export type AdmitResult =
  | { allowed: true; outcomes: RuleOutcome[] }
  | { allowed: false; outcomes: RuleOutcome[]; retryAfterMs: number; blocking: RuleOutcome };

/** A rule's window in whole milliseconds (at least 1): the algorithms count in integer time. */
export const windowMsOf = (rule: RateLimitRule) => Math.max(1, Math.round(rule.window_seconds * 1000));

/** Whether a rule counts this request (its operation, tier and agent filters). */
export const applies = (rule: RateLimitRule, subject: LimitSubject, operation: Operation) =>
  (!rule.operations || rule.operations.includes(operation)) &&
  (!rule.tiers || rule.tiers.includes(subject.tier)) &&
  (!rule.agents || rule.agents.includes(subject.agentId));

/** The scope key a rule counts a request under. */
export const keyFor = (rule: RateLimitRule, subject: LimitSubject, operation: Operation) => {
  switch (rule.scope) {
    case 'global':
      return '*';
    case 'agent':
      return subject.agentId;
    case 'agent_tool':
      return `${subject.agentId}|${operation}`;
  }
};

/**
 * Applies the configured rules to authenticated operations. Every rule that applies (by operation, tier
 * and agent filters) counts the request under its scope key; the request is admitted only when all of
 * them admit it, and then all of them record it.
 */
export function createRateLimiter(
  initialRules: readonly RateLimitRule[],
  options: { maxKeys?: number } = {},
) {
  const maxKeys = options.maxKeys ?? 100_000;
  // One map of scope key -> state per rule (no per-request key strings). Bounded, so an unbounded stream
  // of remote agents cannot grow them.
  let rules: { rule: RateLimitRule; states: BoundedMap<string, LimitState> }[] = [];
  const configure = (next: readonly RateLimitRule[]) => {
    rules = next.map((rule) => ({ rule, states: createBoundedMap<string, LimitState>(maxKeys) }));
  };
  configure(initialRules);

  return {
    get rules(): readonly RateLimitRule[] {
      return rules.map((r) => r.rule);
    },

    admit(subject: LimitSubject, operation: Operation, now: number): AdmitResult {
      if (rules.length === 0) return { allowed: true, outcomes: [] };
      const outcomes: RuleOutcome[] = [];
      const states: LimitState[] = [];
      let blocking: RuleOutcome | undefined;
      for (const { rule, states: byKey } of rules) {
        if (!applies(rule, subject, operation)) continue;
        const key = keyFor(rule, subject, operation);
        let state = byKey.get(key);
        if (!state) {
          state = createLimitState(rule.algorithm, rule.limit, windowMsOf(rule));
          byKey.set(key, state);
        }
        const outcome = state.check(now) as RuleOutcome;
        outcome.rule = rule;
        outcome.key = key;
        outcomes.push(outcome);
        states.push(state);
        if (!outcome.allowed && (!blocking || outcome.retryAfterMs > blocking.retryAfterMs))
          blocking = outcome;
      }
      if (blocking) {
        // The refused request is not counted: rules that would have admitted it keep that request in
        // their remaining quota (when their next quota comes does not depend on it).
        for (const outcome of outcomes) if (outcome.allowed) outcome.remaining += 1;
        return { allowed: false, outcomes, retryAfterMs: blocking.retryAfterMs, blocking };
      }
      for (const state of states) state.consume(now);
      return { allowed: true, outcomes };
    },

    /** Replaces the rules and forgets all counts (scenarios, reset). */
    configure,
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/**
 * A wait in whole seconds, rounded up so it is never early: the one computation behind Retry-After
 * (delta-seconds), the RateLimit field's `t` and a 429 body's `retry_after_seconds`.
 */
export const waitSeconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/**
 * Retry-After as delta-seconds (`waitSeconds`) or as an HTTP-date on the gateway clock: the first whole
 * second at which the request is admitted. Read against the answer's `Date` (the same clock, truncated to
 * the second), an HTTP-date is never earlier than `t` seconds after it.
 */
export function formatRetryAfter(retryAfterMs: number, now: number, format: 'seconds' | 'http-date'): string {
  if (format === 'seconds') return String(waitSeconds(retryAfterMs));
  // Rounded up to a whole second, as an HTTP-date cannot say less.
  return new Date(Math.ceil((now + Math.max(0, retryAfterMs)) / 1000) * 1000).toUTCString();
}

/**
 * IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers-10), one list member
 * per rule that applied: `"name";q=<quota>;w=<window s>` and `"name";r=<remaining>;t=<seconds>`, where `t`
 * is the time until more quota is made available (section 4.1.2): for the rule that refused a request it is
 * the Retry-After itself (section 6: Retry-After is never earlier than `t`).
 */
export function rateLimitHeaders(outcomes: readonly RuleOutcome[]): Record<string, string> {
  if (outcomes.length === 0) return {};
  // A loop rather than map/join: this runs on every admitted request.
  let policy = '';
  let state = '';
  for (const o of outcomes) {
    const separator = policy === '' ? '' : ', ';
    policy += `${separator}"${o.rule.name}";q=${o.rule.limit};w=${Math.ceil(o.rule.window_seconds)}`;
    state += `${separator}"${o.rule.name}";r=${o.remaining};t=${waitSeconds(o.nextMs)}`;
  }
  return { 'ratelimit-policy': policy, ratelimit: state };
}
