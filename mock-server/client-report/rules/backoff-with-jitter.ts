import type { JournalEntry } from '../../journal.ts';
import { describe, firstWhere, intervalsOf, isFailure, retryChains } from '../journal-facts.ts';
import type { ClientRule, Finding } from '../types.ts';

// Retries after a failure the gateway gave no Retry-After for: the client's own backoff is judged.
const unguided = (e: JournalEntry) => isFailure(e) && e.retry_after === undefined;
// Waits of one chain this close are "the same": 5 ms or 5%, whichever is larger (scheduling noise grows
// with the wait).
const same = (a: number, b: number) => Math.abs(a - b) <= Math.max(5, 0.05 * Math.max(a, b));
/**
 * Waits of two sequences this close are "alike": 5 ms or 2%. Tighter than `same`: libraries jitter by as
 * little as 20% (axios-retry's exponentialDelay adds 0-20%), and at 5% three of its sequences would match by
 * chance about 1% of the time; at 2% it is 0.01%.
 */
export const ALIKE_FRACTION = 0.02;
const alikeWait = (a: number, b: number) => Math.abs(a - b) <= Math.max(5, ALIKE_FRACTION * Math.max(a, b));
/**
 * Retries that never wait longer than this did not back off at all: a zero-delay retry measures as
 * scheduling noise, which is tens of milliseconds on a loaded machine, never a backoff step.
 */
export const NO_WAIT_MS = 50;
export interface Sequence {
  chain: JournalEntry[];
  intervals: number[];
}
const ms = (values: number[]) => values.map((v) => `${Math.round(v)}`).join(', ');

/** What one retry chain's waits can show, and how many retries it takes to show it. */
const SCHEDULES = [
  {
    // Three retries that never waited past NO_WAIT_MS: no backoff (zero delay, as axios-retry's default),
    // whatever noise spread them. Full jitter on a first bound of b ms waits that little three times in a
    // row with probability (50/b)(25/b)(12.5/b): 1/512 for b = 200 ms, 1/1728 for ky's 300 ms.
    retries: 3,
    shows: (intervals: number[]) => intervals.every((d) => d <= NO_WAIT_MS),
    says: (intervals: number[]) =>
      `came without waiting (${ms(intervals)} ms, none over ${NO_WAIT_MS} ms): no backoff`,
  },
  {
    retries: 3,
    shows: (intervals: number[]) => intervals.every((d) => same(d, intervals[0] as number)),
    says: (intervals: number[]) =>
      `came at identical intervals (${ms(intervals)} ms): no backoff and no jitter`,
  },
  {
    // Five retries whose waits never grew past 1.5x the first: exponential backoff doubles, and full jitter
    // (a uniform wait up to the doubled bound) looks like that about 0.1% of the time (0.15% capped at ten
    // times the base; four retries would be 1.4%), while scheduling noise cannot fake the growth.
    retries: 5,
    shows: ([first = 0, ...later]: number[]) => Math.max(...later) <= 1.5 * first,
    says: (intervals: number[]) => `did not back off: waits of ${ms(intervals)} ms never grew`,
  },
] as const;

/** What one retry chain's own waits show: no wait at all, identical intervals, or waits that never grew. */
export function scheduleFinding({ chain, intervals }: Sequence): Finding | undefined {
  const schedule = SCHEDULES.find((s) => intervals.length >= s.retries && s.shows(intervals));
  return schedule
    ? {
        message: `${intervals.length} retries of ${describe(chain[0] as JournalEntry)} ${schedule.says(intervals)}`,
        requests: chain,
      }
    : undefined;
}

/**
 * Each unguided retry chain judged on its own waits, and the sequences long enough to compare. A schedule
 * is reported when a third or more of the chains long enough to show it do: a client without backoff
 * shows it in every chain, while a jittered client that matches it by chance once in a thousand chains
 * must not be flagged for having had a thousand.
 */
export function judgeEachChain(entries: readonly JournalEntry[]) {
  const sequences: Sequence[] = [];
  const flagged = SCHEDULES.map(() => [] as Finding[]);
  const eligible = SCHEDULES.map(() => 0);
  for (const chain of retryChains(entries, unguided)) {
    const intervals = intervalsOf(chain);
    if (intervals.length >= 3) sequences.push({ chain, intervals });
    SCHEDULES.forEach((s, k) => {
      if (intervals.length >= s.retries) eligible[k] = (eligible[k] as number) + 1;
    });
    const k = SCHEDULES.findIndex((s) => intervals.length >= s.retries && s.shows(intervals));
    if (k >= 0) flagged[k]?.push(scheduleFinding({ chain, intervals }) as Finding);
  }
  const findings = flagged.flatMap((list, k) => (3 * list.length >= (eligible[k] as number) ? list : []));
  return { findings, sequences };
}

/**
 * Whether sequences alike one base are a fixed schedule, on which many clients would retry in lock-step:
 * four of them at least, and a third or more of all sequences. A client without jitter puts nearly every
 * sequence on its one schedule. A jittered one matches a base by chance: about 1% of pairs for axios-retry's
 * 20% jitter, so three alike out of five happen 0.3% of the time and four alike 0.001%; over fifty sequences
 * a few match, never a third of them.
 */
export const LOCK_STEP_SEQUENCES = 4;
export const lockStep = (matching: number, sequences: number) =>
  matching >= LOCK_STEP_SEQUENCES && 3 * matching >= sequences;

/** Whether two retry sequences are on one schedule: their first three waits alike. */
export const alike = (a: number[], b: number[]) =>
  a.slice(0, 3).every((d, k) => alikeWait(d, b[k] as number));

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
    // Only sequences whose first wait is "alike" the base's can match it: look those up by first wait
    // (sorted), not through every sequence. `alikeWait(a, b)` needs b within [a - max(5, 2% of a),
    // max(a + 5, a / 0.98)]; the slack only absorbs rounding. A wait that is not finite is compared always.
    const firstWait = (k: number) => (sequences[k] as Sequence).intervals[0] as number;
    const positions = sequences.map((_, k) => k);
    const byFirstWait = positions
      .filter((k) => Number.isFinite(firstWait(k)))
      .sort((a, b) => firstWait(a) - firstWait(b) || a - b);
    const odd = positions.filter((k) => !Number.isFinite(firstWait(k)));
    const near = (d: number) => {
      if (!Number.isFinite(d)) return positions;
      const slack = 1e-6 * (Math.abs(d) + 5);
      const low = d - Math.max(5, ALIKE_FRACTION * d) - slack;
      const high = Math.max(d + 5, d / (1 - ALIKE_FRACTION)) + slack;
      const from = firstWhere(byFirstWait.length, (j) => firstWait(byFirstWait[j] as number) >= low);
      const to = firstWhere(byFirstWait.length, (j) => firstWait(byFirstWait[j] as number) > high);
      return [...byFirstWait.slice(from, Math.max(from, to)), ...odd].sort((a, b) => a - b);
    };
    for (const base of sequences) {
      const matching = near(base.intervals[0] as number)
        .map((k) => sequences[k] as Sequence)
        .filter((other) => alike(base.intervals, other.intervals));
      if (lockStep(matching.length, sequences.length)) {
        findings.push(lockStepFinding(matching));
        break;
      }
    }
    return findings;
  },
};
