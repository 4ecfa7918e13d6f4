/*
 * The failure class of a retry chain, from spec section 7's table, which decides what backoff-with-jitter
 * asks of the chain's waits:
 * - '429': the chain retried a 429 without Retry-After (remedy: "exponential backoff with jitter"). Its
 *   waits must back off AND be jittered: the jitter readings (several sequences on one schedule, the spread
 *   of their waits place by place, a cap held without jitter) apply to it.
 * - '5xx': every failure the chain retried was a 5xx without Retry-After or a dropped connection (remedy:
 *   "retry with backoff"; no jitter asked). A dropped connection (no answer at all) is counted here: §7
 *   names 5xx as the transient server-side failure, and a connection that closed under the request is that
 *   failure without a status, not a rate limit. Its waits must back off only: a wait at all, waits that
 *   grow, not one fixed interval. urllib3's Retry with its default backoff_jitter of 0 (0, 2f, 4f, ... held
 *   at backoff_max) keeps it.
 * A mixed chain counts as '429' as soon as one attempt it retried was a 429 without Retry-After: a chain is
 * one schedule, read as a whole, and a client that meets a rate limit within it must not retry in lock-step
 * with every other client that met it.
 */
import type { JournalEntry } from '../../journal/journal.ts';

/** What section 7 asks of a retry chain's waits: backoff with jitter ('429'), or backoff ('5xx'). */
export type FailureClass = '429' | '5xx';

/** A refusal for the rate limit that said nothing of when to come back. */
const unguided429 = (e: JournalEntry) => e.status === 429 && e.retry_after === undefined;

/** The class of a retry chain: '429' if any attempt it retried (all but its last) was a 429 without Retry-After. */
export const failureClassOf = (chain: readonly JournalEntry[]): FailureClass =>
  chain.slice(0, -1).some(unguided429) ? '429' : '5xx';

/** The class and the remedy it was judged against, for a finding's message. */
export const JUDGED_AS: Record<FailureClass, string> = {
  '429': 'after a 429 without Retry-After (§7: exponential backoff with jitter)',
  '5xx': 'after a 5xx or a dropped connection (§7: retry with backoff, no jitter asked)',
};

/** The classes of some chains, in words: one of JUDGED_AS, or both. */
export function judgedAs(chains: readonly (readonly JournalEntry[])[]): string {
  const classes = new Set(chains.map(failureClassOf));
  if (classes.size === 1) return JUDGED_AS[[...classes][0] as FailureClass];
  return 'after 429s without Retry-After and after 5xx or dropped connections (§7: backoff for both, jitter after a 429)';
}
