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
        // their remaining quota (their resetMs, as if it were counted, can only be later: conservative).
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

/** Retry-After as delta-seconds (rounded up, so it is never early) or as an HTTP-date on the gateway clock. */
export function formatRetryAfter(retryAfterMs: number, now: number, format: 'seconds' | 'http-date'): string {
  const seconds = Math.max(0, Math.ceil(retryAfterMs / 1000));
  if (format === 'seconds') return String(seconds);
  // Rounded up to a whole second, as an HTTP-date cannot say less.
  return new Date(Math.ceil((now + retryAfterMs) / 1000) * 1000).toUTCString();
}

/**
 * IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers-10), one list member
 * per rule that applied: `"name";q=<quota>;w=<window s>` and `"name";r=<remaining>;t=<seconds to reset>`.
 */
export function rateLimitHeaders(outcomes: readonly RuleOutcome[]): Record<string, string> {
  if (outcomes.length === 0) return {};
  // A loop rather than map/join: this runs on every admitted request.
  let policy = '';
  let state = '';
  for (const o of outcomes) {
    const separator = policy === '' ? '' : ', ';
    policy += `${separator}"${o.rule.name}";q=${o.rule.limit};w=${Math.ceil(o.rule.window_seconds)}`;
    state += `${separator}"${o.rule.name}";r=${o.remaining};t=${Math.ceil(o.resetMs / 1000)}`;
  }
  return { 'ratelimit-policy': policy, ratelimit: state };
}
