import type { JournalEntry } from '../../journal/journal.ts';

/*
 * Clock epochs. QA may move the gateway clock into its past (admin API, CLI, dashboard, a scenario's start):
 * the clock then starts a new epoch and the journal records each request's (`epoch`, absent for 0). Times
 * compare only within one epoch: a request of epoch 2 stamped 2026-01-01 did not come "11 months before" the
 * 429 of epoch 1, nor 0 s after it. So the rules judge each epoch's requests apart, and never see a reaction
 * or a wait across a boundary.
 */

/** The epoch of an entry (0 when the journal left it out). */
export const epochOf = (e: JournalEntry) => e.epoch ?? 0;

/** One epoch's requests, oldest first, and what the report says of it. */
export interface EpochSlice {
  epoch: number;
  entries: JournalEntry[];
}

/** The entries (oldest first) split by epoch, in the order the epochs began; one slice when there is one epoch. */
export function epochSlices(entries: readonly JournalEntry[]): EpochSlice[] {
  const slices = new Map<number, JournalEntry[]>();
  for (const e of entries) {
    const epoch = epochOf(e);
    const slice = slices.get(epoch);
    if (slice) slice.push(e);
    else slices.set(epoch, [e]);
  }
  return [...slices].sort(([a], [b]) => a - b).map(([epoch, list]) => ({ epoch, entries: list }));
}

/** What the report shows of an epoch: where it began and the time range it covers, on the gateway clock. */
export interface EpochView {
  epoch: number;
  /** Its first request of the agent's (the epoch began before it). */
  first_seq: number;
  requests: number;
  from: string;
  to: string;
}

/** The epochs of a report, for its JSON and text; empty when the agent's requests are all of one epoch. */
export function epochViews(slices: readonly EpochSlice[]): EpochView[] {
  if (slices.length < 2) return [];
  return slices.map(({ epoch, entries }) => {
    let from = Number.POSITIVE_INFINITY;
    let to = Number.NEGATIVE_INFINITY;
    for (const e of entries) {
      from = Math.min(from, e.at);
      to = Math.max(to, e.at);
    }
    return {
      epoch,
      first_seq: (entries[0] as JournalEntry).seq,
      requests: entries.length,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
    };
  });
}
