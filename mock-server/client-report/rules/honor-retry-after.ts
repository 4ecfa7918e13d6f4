/*
 * honor-retry-after (spec sections 7 and 8).
 *
 * The scope of a refusal: for a 429, the requests its rate-limit rule counts (the agent, one operation, or
 * everyone); for a 5xx, retries of the same request (the same `request_key`: its meaning, with cache-buster
 * parameters and ignored fields left out). A reaction: a request the client sent with the refusal's answer
 * in hand (connection facts; see journal-facts.ts `isReaction`), not one already on its way.
 * Broken when a reaction in scope is sent before the Retry-After elapsed (gateway clock), unless it waited
 * out its own earlier Retry-After (libraries track it per request).
 * A retry after a 5xx is an inference: the same request sent again may be another user of the agent asking
 * the same thing (user A's fetch gets a 503 asking for 1 s; user B fetches the same URL 0.2 s later). One
 * early repeat is not taken as a retry; two or more (after one 5xx or several) are: a client that ignores
 * Retry-After does it every time. A 429 binds every request of its scope, whoever sent it: no inference.
 * One behaviour: early requests after 429s are one violation, early retries after 5xx another, counted.
 */
import type { JournalEntry } from '../../journal/journal.ts';
import { mostTakenAway, stallsTakenAway } from '../facts/causality.ts';
import {
  createReactionFacts,
  describe,
  entriesByGatewayTime,
  honouringOwnRetryAfter,
  retryAfterDelay,
  retryAfterUntil,
  scopeOf,
  TOLERANCE_MS,
} from '../journal-facts.ts';
import { seconds, whyReaction } from '../rule-readings/reaction-why.ts';
import { stallsDecided } from '../rule-readings/stall-decided.ts';
import { undecidedAcceptsDecided } from '../rule-readings/undecided-accepts.ts';
import type { ClientRule, Finding } from '../types.ts';

/** Early requests after refusals of one kind, as found per refusal. */
export interface Early {
  refusal: JournalEntry;
  early: JournalEntry[];
}

/** One violation for the early requests after refusals of one kind (429s, or 5xx). */
function grouped(kind: '429' | '5xx', found: readonly Early[]): Finding {
  const { refusal, early } = found[0] as Early;
  const first = early[0] as JournalEntry;
  const total = found.reduce((sum, f) => sum + f.early.length, 0);
  const asked = retryAfterDelay(refusal) ?? 0;
  const why = whyReaction(first, refusal);
  const message =
    `${describe(first)} was sent ${seconds(first.at - refusal.at)} after the ${refusal.status} of #${refusal.seq}, which asked for ${seconds(asked)} (Retry-After: ${refusal.retry_after})` +
    (total > 1
      ? `; ${total} requests in all were sent early, after ${found.length} refusal${found.length > 1 ? 's' : ''}`
      : '');
  const inference =
    kind === '5xx'
      ? `taken as ${total > 1 ? 'retries' : 'a retry'} of the refused request: the same request (same meaning), ${why.says}; ${total} early repeat(s) seen, and one alone is not taken as a retry (another user of the agent may ask the same)`
      : why.inference
        ? `taken as a reaction to the 429: ${why.says}`
        : undefined;
  return {
    message,
    requests: found.flatMap((f) => [f.refusal, ...f.early]),
    count: total,
    ...(inference ? { inference } : {}),
  };
}

/**
 * The violations of early requests found per refusal (oldest refusal first): one for those after 429s, one
 * for those after 5xx when there are EARLY_REPEATS_TAKEN_AS_RETRIES or more of them.
 */
export function earlyFindings(found: readonly Early[]): Finding[] {
  const after429 = found.filter((f) => f.refusal.status === 429);
  const after5xx = found.filter((f) => f.refusal.status !== 429);
  const findings: Finding[] = [];
  if (after429.length > 0) findings.push(grouped('429', after429));
  const repeats = after5xx.reduce((sum, f) => sum + f.early.length, 0);
  if (repeats >= EARLY_REPEATS_TAKEN_AS_RETRIES) findings.push(grouped('5xx', after5xx));
  return findings;
}

// A 5xx binds retries of one request, which another user of the agent may send too: this many early
// repeats (in all) before they are taken as the client's retries.
export const EARLY_REPEATS_TAKEN_AS_RETRIES = 2;

export const honorRetryAfter: ClientRule = {
  id: 'honor-retry-after',
  title: 'No request in the scope of a 429 (or a 5xx) before its Retry-After has elapsed',
  specRef: [{ section: 7, note: '429: honor Retry-After' }, { section: 8 }],
  unobserved: (ctx) =>
    stallsDecided(honorRetryAfter.judge, ctx) ?? undecidedAcceptsDecided(honorRetryAfter.judge, ctx),
  judge({ entries, rateLimitRules, options }) {
    const found: Early[] = [];
    // A retry that waited out its own Retry-After honours it (per-request tracking, as in ky or undici).
    const honouring = honouringOwnRetryAfter(entries);
    const honours = entries.map((e) => honouring.has(e));
    const facts = createReactionFacts(entries);
    const startedBefore = entriesByGatewayTime(entries);
    // Each early request is counted once, however many refusals it came early after; marked by seq (the
    // first position holding a seq stands for it). An early request refused in turn binds what follows it
    // too: a retry 1.1 s after a 503 asking 2 s, refused again, then another 1.7 s later is two early
    // retries, though the second came after the first refusal's Retry-After (a 0.2 s sleep on a loaded
    // machine); the violation stays one (`earlyFindings` groups by kind).
    const firstWithSeq = new Map<number, number>();
    const seqAt = entries.map((e, k) => {
      if (!firstWithSeq.has(e.seq)) firstWithSeq.set(e.seq, k);
      return firstWithSeq.get(e.seq) as number;
    });
    const reported = new Uint8Array(entries.length);
    // Read as if the loop had not stalled (stall-decided.ts), a request counts from the earliest the client
    // may have sent it: the stalls between the refusal's answer and it taken away. 0 otherwise.
    const slack = mostTakenAway(entries);
    entries.forEach((refusal, i) => {
      const until = retryAfterUntil(refusal);
      if (until === undefined || !(refusal.status === 429 || refusal.status >= 500)) return;
      const inScope = scopeOf(refusal, rateLimitRules);
      // The requests in its scope sent before its Retry-After had elapsed.
      const shown: JournalEntry[] = [];
      startedBefore(i, until - TOLERANCE_MS + slack, (k) => {
        const e = entries[k] as JournalEntry;
        if (slack > 0 && e.at - stallsTakenAway(refusal, e) >= until - TOLERANCE_MS) return;
        // Each early request is one violation, however many concurrent 429s it jumped.
        if (reported[seqAt[k] as number]) return;
        // Only reactions count: a request already on its way when the refusal was answered could not obey it.
        if (!(inScope(e) && !honours[k] && facts.isReaction(e, refusal, options.graceMs))) return;
        shown.push(e);
        reported[seqAt[k] as number] = 1;
      });
      if (shown.length === 0) return;
      found.push({ refusal, early: shown });
    });
    return earlyFindings(found);
  },
};
