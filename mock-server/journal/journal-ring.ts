import type { JournalEntry } from './journal-entry.ts';
import type { RingWindow } from './record-ring.ts';
import { nextTurn } from './write-slices.ts';

export { createRing, type RingWindow } from './record-ring.ts';

/*
 * The journal's ring and the readers of a window of it (journal.ts composes them): appending, the entries
 * after a seq, the newest matches, and the deferred work of the entries a reader is about to show.
 */

/**
 * The most entries one page (or one slice of an export or report read) looks at when it filters by agent:
 * a page of an agent with few requests in a full journal of a million ends there (`more`, `next_since`)
 * rather than hold the event loop for a pass over the whole ring.
 */
export const MAX_JOURNAL_SCAN = 20_000;

/** The most time one slice of an export or report read takes before it ends early (see `sliceOf`). */
export const SLICE_BUDGET_MS = 10;

/** An entry as the API shows it (its work done at its first read, `record-ring.ts`), `time` as ISO text. */
export const shown = (entry: JournalEntry): JournalEntry => {
  entry.time = new Date(entry.at).toISOString();
  return entry;
};

/**
 * Which entries a read wants: any (undefined), one agent's (its id), or one agent's and every entry no agent
 * was named for (`unnamed`: no agent, or only a token's fingerprint), for the client report to tie to the
 * agent by the connection they came on (`client-report/attribution.ts`).
 */
export type AgentMatch = string | undefined | { readonly agent: string; readonly unnamed: true };

/** An entry's agent that names nobody: none, or the fingerprint of a token no one named (`tok_1a2b3c4d`). */
export const isUnnamedAgent = (agent: string | undefined) =>
  agent === undefined || (agent.length === 12 && /^tok_[0-9a-f]{8}$/.test(agent));

/** Whether an entry whose agent is `agent` is one a read wants. */
export const agentMatches = (match: AgentMatch, agent: string | undefined) =>
  match === undefined ||
  (typeof match === 'string' ? agent === match : agent === match.agent || isUnnamedAgent(agent));

/** Whether the i-th entry of a window is one a read wants, read without making the entry. */
const matchesAgent = (agentAt: RingWindow['agentAt'], agent: AgentMatch) => (i: number) =>
  agent === undefined || agentMatches(agent, agentAt(i));

/**
 * At most `max` matching entries of a window after its start and up to `until`, looking at no more than
 * MAX_JOURNAL_SCAN entries: `last` is the seq of the last entry looked at, `more` whether entries up to
 * `until` remain after it. With `budgetMs` (exports and report reads, whose slices may be any size), it
 * also ends once that much time has passed: an entry's first read redacts its exchange (a secret scan of
 * its headers and bodies, most of a millisecond), so 250 unread entries could hold the loop far longer.
 */
export function sliceOf(
  { size, start, at, seqAt, agentAt }: RingWindow,
  since: number,
  until: number,
  agent: AgentMatch,
  max: number,
  budgetMs?: number,
) {
  const end = Math.min(size, start + MAX_JOURNAL_SCAN);
  const deadline = budgetMs === undefined ? Number.POSITIVE_INFINITY : performance.now() + budgetMs;
  const matches = matchesAgent(agentAt, agent);
  const entries: JournalEntry[] = [];
  let i = start;
  for (; i < end && entries.length < max; i++) {
    if (seqAt(i) > until) break;
    if (!matches(i)) continue;
    entries.push(shown(at(i)));
    if (budgetMs !== undefined && performance.now() > deadline) {
      i += 1;
      break;
    }
  }
  const last = i > start ? seqAt(i - 1) : since;
  return { entries, last, more: i < size && seqAt(i) <= until };
}

/** The newest `wanted` matching entries of a window, oldest first (`page` with a limit). */
export function newestOf(
  { size, start, at, agentAt }: RingWindow,
  agent: AgentMatch,
  wanted: number,
): JournalEntry[] {
  const matches = matchesAgent(agentAt, agent);
  const entries: JournalEntry[] = [];
  for (let i = size - 1; i >= start && entries.length < wanted; i--) {
    if (matches(i)) entries.push(shown(at(i)));
  }
  return entries.reverse();
}

/** The seq just before the `limit`-th newest matching entry of a window (comparisons only), or `since`. */
export function sinceForNewest(
  { size, start, seqAt, agentAt }: RingWindow,
  since: number,
  agent: AgentMatch,
  limit: number,
) {
  const matches = matchesAgent(agentAt, agent);
  for (let i = size - 1, found = 0; i >= start; i--) {
    if (matches(i) && ++found === limit) return seqAt(i) - 1;
  }
  return since;
}

/**
 * The deferred work (readings, exchange redaction) of the entries a page will show, SLICE_BUDGET_MS at a
 * time with a turn of the event loop between: a page of 1,000 entries never read before (1,000 secret
 * scans) is not one long block.
 */
export async function settlePageEntries(
  { size, start, at, agentAt }: RingWindow,
  filter: { agent?: AgentMatch; limit?: number },
  max: number,
) {
  const matches = matchesAgent(agentAt, filter.agent);
  const wanted = Math.min(filter.limit ?? max, max);
  const backwards = filter.limit !== undefined;
  let deadline = performance.now() + SLICE_BUDGET_MS;
  let found = 0;
  const end = Math.min(size, start + MAX_JOURNAL_SCAN);
  for (let k = 0; found < wanted && k < (backwards ? size - start : end - start); k++) {
    const i = backwards ? size - 1 - k : start + k;
    if (!matches(i)) continue;
    found += 1;
    at(i);
    if (performance.now() > deadline) {
      await nextTurn();
      deadline = performance.now() + SLICE_BUDGET_MS;
    }
  }
}

/**
 * The deferred work of every entry after `since` up to `until`, a slice of SLICE_BUDGET_MS at a time with a
 * turn of the event loop between two. An entry whose work fails is left for a reader, which then sees the
 * error (nothing in the background throws unseen).
 */
export async function settleRecordedUpTo(
  window: (since: number) => RingWindow,
  since: number,
  until: number,
): Promise<void> {
  for (;;) {
    const { size, start, at, seqAt } = window(since);
    const deadline = performance.now() + SLICE_BUDGET_MS;
    let i = start;
    for (; i < size && seqAt(i) <= until && performance.now() <= deadline; i++) {
      try {
        at(i);
      } catch {
        // Left for a reader.
      }
      since = seqAt(i);
    }
    if (i >= size || seqAt(i) > until) return;
    await nextTurn();
  }
}

/**
 * The entries after `from` up to `until` that match `agent`, as arrays of at most `sliceEntries` (none
 * empty), each read only when it is asked for (`sliceOf`, with its time budget), from the ring as it is then:
 * entries the ring overwrote meanwhile are skipped.
 */
export function* slicesAfter(
  window: (since: number) => RingWindow,
  from: number,
  until: number,
  agent: AgentMatch,
  sliceEntries: number,
  budgetMs: number,
): Generator<JournalEntry[], void, undefined> {
  let since = from;
  for (;;) {
    const found = sliceOf(window(since), since, until, agent, sliceEntries, budgetMs);
    if (found.entries.length > 0) yield found.entries;
    if (!found.more) return;
    since = found.last;
  }
}

/**
 * One page's entries (see `Journal.page`): with `limit`, the newest `limit` (at most `max`) matching
 * entries; else at most `max` from the entry after `since`, looking at no more than MAX_JOURNAL_SCAN.
 */
export function pageAfter(
  window: (since: number) => RingWindow,
  seq: number,
  filter: { agent?: AgentMatch; since?: number; limit?: number },
  max: number,
): { entries: JournalEntry[]; more: boolean; next_since: number } {
  const since = filter.since ?? 0;
  if (filter.limit !== undefined)
    return {
      entries: newestOf(window(since), filter.agent, Math.min(filter.limit, max)),
      more: false,
      next_since: seq,
    };
  const found = sliceOf(window(since), since, seq, filter.agent, max);
  return {
    entries: found.entries,
    more: found.more,
    next_since: found.more ? found.last : Math.max(seq, since),
  };
}

/**
 * Every entry up to `until` matching `agent`, read in slices of at most `sliceMax` (each within
 * SLICE_BUDGET_MS) with a turn of the event loop between two: a full journal of a million is never one
 * synchronous pass.
 */
export async function readMatching(
  window: (since: number) => RingWindow,
  until: number,
  agent: AgentMatch,
  sliceMax: number,
): Promise<JournalEntry[]> {
  const entries: JournalEntry[] = [];
  let since = 0;
  for (;;) {
    const found = sliceOf(window(since), since, until, agent, sliceMax, SLICE_BUDGET_MS);
    for (const entry of found.entries) entries.push(entry);
    if (!found.more) return entries;
    since = found.last;
    await nextTurn();
  }
}
