import { PROTECTED_ENDPOINTS } from '../../../vocabulary/endpoints.ts';
import { parseRetryAfter, retryAfterDelayMs } from '../../../vocabulary/retry-after.ts';
import type { RateLimitRule } from '../../config/schema.ts';
import type { JournalEntry } from '../../journal/journal.ts';
import { stallBetween, stallsTakenAway, unstalledWaits } from './causality.ts';
import { addToGroup, answeredAt, keyOf } from './entry.ts';
import { createReactionFacts } from './reactions.ts';
import { firstWhere } from './search.ts';

/** Milliseconds the Retry-After of an entry asked for (gateway clock), or undefined. */
export function retryAfterDelay(e: JournalEntry): number | undefined {
  const parsed = e.retry_after === undefined ? undefined : parseRetryAfter(e.retry_after);
  // An HTTP-date is on the gateway clock, which is what `at` records.
  return parsed && retryAfterDelayMs(parsed, undefined, e.at);
}

/**
 * The requests a refusal's Retry-After binds: for a 429, those its rate-limit rule counts (the whole
 * agent, one operation, or everyone); for a 5xx (a failure of that request), retries of the same request.
 */
export function scopeOf(
  refusal: JournalEntry,
  rules: readonly RateLimitRule[],
): (e: JournalEntry) => boolean {
  if (refusal.status !== 429) {
    const key = keyOf(refusal);
    return (e) => key !== undefined && keyOf(e) === key;
  }
  const rule = rules.find((r) => r.name === refusal.limit?.rule);
  if (!rule || rule.scope === 'agent_tool') return (e) => e.operation === refusal.operation;
  const counted: readonly string[] = rule.operations ?? PROTECTED_ENDPOINTS;
  return (e) => counted.includes(e.operation);
}

/**
 * Retry chains: runs of requests with the same key where each one is a retry of the one before (a reaction
 * to its failure, with no grace: an immediate retry is a retry). `continueAfter` decides which failures a chain continues
 * after. Copies of a request sent in parallel make parallel chains: a retry continues the one that failed
 * first (first failed, first retried: a client retrying parallel copies on one schedule), whichever
 * connection its pool hands the retry (a pool hands out the connection just freed, not the copy's own).
 */
export function retryChains(
  entries: readonly JournalEntry[],
  continueAfter: (e: JournalEntry) => boolean,
): JournalEntry[][] {
  const facts = createReactionFacts(entries);
  const open = new Map<string, JournalEntry[][]>();
  const chains: JournalEntry[][] = [];
  for (const e of entries) {
    const key = keyOf(e);
    if (!key) continue;
    const candidates = open.get(key) ?? [];
    let chosen: JournalEntry[] | undefined;
    for (const chain of candidates) {
      const last = chain.at(-1) as JournalEntry;
      if (!continueAfter(last) || !facts.isReaction(e, last, 0)) continue;
      if (!chosen || answeredAt(last) < answeredAt(chosen.at(-1) as JournalEntry)) chosen = chain;
    }
    if (chosen) chosen.push(e);
    else {
      chosen = [e];
      chains.push(chosen);
    }
    // A chain stays open while its last attempt failed; only the open ones are kept per key.
    const stillOpen = candidates.filter((c) => c !== chosen);
    if (continueAfter(e)) stillOpen.push(chosen);
    open.set(key, stillOpen);
  }
  return chains;
}

/**
 * Time from each answer to the next attempt, in real milliseconds (read as if the loop had not stalled,
 * less what its stalls may have added: `unstalledWaits`).
 */
export const intervalsOf = (chain: readonly JournalEntry[]) =>
  unstalledWaits(
    chain,
    chain.slice(1).map((e, i) => e.real_ms - answeredAt(chain[i] as JournalEntry)),
  );

/**
 * The least each wait of a chain may have been as the client meant it: its interval (`intervalsOf`) less the
 * time the gateway's loop stalls may have added meanwhile (`stallBetween`). Load only lengthens waits; a reading that a longer
 * first wait would make suspect (a schedule that never grew) reads the first waits so, never longer than
 * the client may have meant them, whatever the machine's speed.
 */
export const waitFloorsOf = (chain: readonly JournalEntry[]) =>
  intervalsOf(chain).map((wait, i) =>
    Math.max(0, wait - stallBetween(chain[i] as JournalEntry, chain[i + 1] as JournalEntry)),
  );

/** When a refusal's Retry-After ends, on the gateway clock; undefined without one. */
export const retryAfterUntil = (e: JournalEntry) => {
  const delay = retryAfterDelay(e);
  return delay === undefined ? undefined : e.at + delay;
};

// Clock jitter between the agent and the gateway, forgiven.
export const TOLERANCE_MS = 10;

/**
 * The retries that waited out the Retry-After their own previous attempt was given. Client libraries (ky,
 * undici's retry agent) track Retry-After per request; such a retry is honouring it, even if it lands in
 * the window another, concurrent request was told about. An attempt's previous one is the last entry
 * with its key ahead of the first entry whose seq is not below its own: just ahead of it, when
 * the entries are oldest first as the report passes them.
 */
export function honouringOwnRetryAfter(entries: readonly JournalEntry[]): ReadonlySet<JournalEntry> {
  // Two rules ask for it over the same journal: worked out once per array.
  const known = honouringOf.get(entries);
  if (known) return known;
  const highestSeq: number[] = [];
  for (const e of entries) highestSeq.push(Math.max(e.seq, highestSeq.at(-1) ?? -Infinity));
  // The attempts to judge once the entries ahead of each position are known.
  const judgedAt = new Map<number, JournalEntry[]>();
  for (const f of entries) {
    if (!keyOf(f)) continue;
    const place = firstWhere(entries.length, (k) => (highestSeq[k] as number) >= f.seq);
    addToGroup(judgedAt, place, f);
  }
  const honouring = new Set<JournalEntry>();
  const previous = new Map<string, JournalEntry>();
  entries.forEach((e, k) => {
    for (const f of judgedAt.get(k) ?? []) {
      const before = previous.get(keyOf(f) as string);
      const until = before ? retryAfterUntil(before) : undefined;
      // Read as if the loop had not stalled, from the earliest it may have been sent (`stallsTakenAway`).
      if (until !== undefined && f.at - stallsTakenAway(before as JournalEntry, f) >= until - TOLERANCE_MS)
        honouring.add(f);
    }
    const key = keyOf(e);
    if (key) previous.set(key, e);
  });
  honouringOf.set(entries, honouring);
  return honouring;
}
const honouringOf = new WeakMap<readonly JournalEntry[], ReadonlySet<JournalEntry>>();
