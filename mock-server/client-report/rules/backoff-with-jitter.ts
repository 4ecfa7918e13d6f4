import type { JournalEntry } from '../../journal.ts';
import { describe, firstWhere, intervalsOf, isFailure, retryChains } from '../journal-facts.ts';
import type { ClientRule, Finding } from '../types.ts';

// Retries after a failure the gateway gave no Retry-After for: the client's own backoff is judged.
const unguided = (e: JournalEntry) => isFailure(e) && e.retry_after === undefined;
// Waits this close are "the same": 5 ms or 5%, whichever is larger (scheduling noise grows with the wait).
const same = (a: number, b: number) => Math.abs(a - b) <= Math.max(5, 0.05 * Math.max(a, b));
export interface Sequence {
  chain: JournalEntry[];
  intervals: number[];
}
const ms = (values: number[]) => values.map((v) => `${Math.round(v)}`).join(', ');

/** What one retry chain's own waits show: identical intervals, or waits that never grew. */
export function scheduleFinding({ chain, intervals }: Sequence): Finding | undefined {
  const [first = 0, ...later] = intervals;
  if (intervals.length >= 3 && intervals.every((d) => same(d, first))) {
    return {
      message: `${intervals.length} retries of ${describe(chain[0] as JournalEntry)} came at identical intervals (${ms(intervals)} ms): no backoff and no jitter`,
      requests: chain,
    };
  }
  if (intervals.length >= 5 && Math.max(...later) <= 1.5 * first) {
    // Five retries whose waits never grew past 1.5x the first: exponential backoff doubles, and full jitter
    // (a uniform wait up to the doubled bound) looks like that about 0.1% of the time (0.15% capped at ten
    // times the base; four retries would be 1.4%), while scheduling noise cannot fake the growth.
    return {
      message: `${intervals.length} retries of ${describe(chain[0] as JournalEntry)} did not back off: waits of ${ms(intervals)} ms never grew`,
      requests: chain,
    };
  }
  return undefined;
}

/** Each unguided retry chain judged on its own waits, and the sequences long enough to compare. */
export function judgeEachChain(entries: readonly JournalEntry[]) {
  const findings: Finding[] = [];
  const sequences: Sequence[] = [];
  for (const chain of retryChains(entries, unguided)) {
    const intervals = intervalsOf(chain);
    if (intervals.length >= 3) sequences.push({ chain, intervals });
    const finding = scheduleFinding({ chain, intervals });
    if (finding) findings.push(finding);
  }
  return { findings, sequences };
}

/**
 * Whether two retry sequences are on one schedule: their first three waits alike. Three such sequences are a
 * fixed schedule, so many clients would retry in lock-step. Two alike is not enough evidence: with equal
 * jitter (half fixed, half random) two sequences can match by chance once there are many.
 */
export const alike = (a: number[], b: number[]) => a.slice(0, 3).every((d, k) => same(d, b[k] as number));

/** The finding for sequences that retried on one schedule. */
export const lockStepFinding = (matching: Sequence[]): Finding => ({
  message: `${matching.length} retry sequences used the same waits (${matching.map((m) => `${ms(m.intervals.slice(0, 3))} ms`).join('; ')}): backoff without jitter`,
  requests: matching.flatMap((m) => m.chain).slice(0, 12),
});

export const backoffWithJitter: ClientRule = {
  id: 'backoff-with-jitter',
  title: 'Retries after a 429 without Retry-After, or after a 5xx, back off exponentially with jitter',
  specRef: '§7 (429: exponential backoff with jitter; 5xx: retry with backoff)',
  judge({ entries }) {
    const { findings, sequences } = judgeEachChain(entries);
    // Only sequences whose first wait is "the same" as the base's can match it: look those up by first
    // wait (sorted), not through every sequence. `same(a, b)` needs b within [a - max(5, 5% of a),
    // max(a + 5, a / 0.95)]; the slack only absorbs rounding. A wait that is not finite is compared always.
    const firstWait = (k: number) => (sequences[k] as Sequence).intervals[0] as number;
    const positions = sequences.map((_, k) => k);
    const byFirstWait = positions
      .filter((k) => Number.isFinite(firstWait(k)))
      .sort((a, b) => firstWait(a) - firstWait(b) || a - b);
    const odd = positions.filter((k) => !Number.isFinite(firstWait(k)));
    const near = (d: number) => {
      if (!Number.isFinite(d)) return positions;
      const slack = 1e-6 * (Math.abs(d) + 5);
      const low = d - Math.max(5, 0.05 * d) - slack;
      const high = Math.max(d + 5, d / 0.95) + slack;
      const from = firstWhere(byFirstWait.length, (j) => firstWait(byFirstWait[j] as number) >= low);
      const to = firstWhere(byFirstWait.length, (j) => firstWait(byFirstWait[j] as number) > high);
      return [...byFirstWait.slice(from, Math.max(from, to)), ...odd].sort((a, b) => a - b);
    };
    for (const base of sequences) {
      const matching = near(base.intervals[0] as number)
        .map((k) => sequences[k] as Sequence)
        .filter((other) => alike(base.intervals, other.intervals));
      if (matching.length >= 3) {
        findings.push(lockStepFinding(matching));
        break;
      }
    }
    return findings;
  },
};
