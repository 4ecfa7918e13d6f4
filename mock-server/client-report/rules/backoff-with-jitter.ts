// One file on purpose: one rule, one id (client-report/rules/ holds one file per rule); its schedule readings
// are in rule-readings/, what is left here is how this rule reads each retry chain into findings.
/*
 * backoff-with-jitter (spec section 7's table: a 429 without Retry-After, "exponential backoff with jitter";
 * a 5xx, "retry with backoff").
 *
 * What it means: after a failure the gateway gave no Retry-After for, a client waits before retrying and
 * waits longer each time (up to a cap); after a 429 it also jitters the waits, so that many clients do not
 * retry in lock-step. Each retry chain is judged by its failure class (failure-class.ts): a chain that
 * retried any 429 without Retry-After is a '429' chain (backoff and jitter); one that retried only 5xx or
 * dropped connections (transient failures) is a '5xx' chain (backoff only). Every failing verdict names the
 * class it judged.
 * Most common real way to break it: a retry loop with no wait or a fixed sleep on 5xx (axios-retry's default
 * noDelay, `while (status >= 500) { await sleep(1000); retry(); }`), or exponential steps with no jitter
 * after 429s (p-retry's README settings meeting a rate limit: 1, 2, 4 s for every call).
 * Most unusual legal way to keep it: urllib3's Retry on 5xx with its default backoff_jitter of 0 (the first
 * retry at once, then 2f, 4f, ... held at backoff_max, no jitter at all: a 5xx asks backoff, not jitter);
 * or full jitter after 429s, whose waits are uniform from 0 up to the doubled bound, so some retries come at
 * once and a later wait may be shorter than an earlier one.
 * Not retries: GET /v1/health (section 4 rule 1). Health is a probe, not a call to retry: a monitor polls
 * it on its own beat whatever it answers (and the spec lists only whoami and the tools as safe to retry,
 * section 4 rule 4), so a poller meeting 503s on a fixed 1 s beat is no retry chain.
 *
 * The same request: the same `request_key` (its meaning: case, spacing, punctuation, ignored fields and
 * cache-buster parameters do not count). A retry: a request with the key of an attempt that failed (429
 * without Retry-After, 5xx without Retry-After, dropped) sent in reaction to that failure (connection facts,
 * see journal-facts.ts); attempts so linked make a retry chain. Its wait: its arrival minus the failure's
 * answer, as the gateway measured it (scheduling noise included: load only ever adds to it).
 * Broken, for every chain ('429' and '5xx' alike: no backoff), when over the agent's retries:
 * - no wait at all: retries that came within NO_WAIT_MS of the failure are more than a client backing off
 *   could send by chance (quick-retries.ts). Any backoff's first step is taken to be at least FIRST_STEP_MS
 *   (the smallest among common libraries), doubling per retry; its chance of waiting NO_WAIT_MS or less at
 *   the k-th retry of a chain is then at most NO_WAIT_MS / (FIRST_STEP_MS x 2^(k-1)) (full jitter, the most
 *   spread). When the chance of so many quick retries is under 1 in 10000, the client does not wait:
 *   however short its chains (six calls each retried twice at once are as clear as one call retried six
 *   times). 1 in 10000, not 1 in 1000: a full-jitter backoff from exactly 100 ms is the reference itself,
 *   and over the rule's several readings 1 in 1000 flagged it in about one journal in 250
 *   (schedule-growth.test.ts, 500 seeds);
 * - waits that never grow: the retries from the third on wait no longer, next to the first two, than the
 *   least-growing backoff (full jitter, bound f, 2f, then 4f, for any f: the spec sets no step and no cap)
 *   shows, or every wait stays under a ceiling that backoff from FIRST_STEP_MS (100, 200, then 400 ms)
 *   passes, each with a chance under 1 in 1000, see schedule-growth.ts (a jittered constant bound, or a cap
 *   reached at the second retry; a backoff that grew and then holds a cap, whatever the cap, passes);
 * - per chain, in a third or more of the chains long enough to show it: 3+ retries none over NO_WAIT_MS,
 *   3+ at identical intervals (a fixed sleep is no backoff), 5+ that never grew past 1.5x the shortest of
 *   the first three (a spike on the first two cannot fake it); and two chains at least when there are more
 *   (one in three matching by chance is no schedule).
 * Broken besides, for '429' chains only (no jitter), when:
 * - per chain, as above: 4+ waits at the end held at a cap without jitter (0, 200, then 400 ms eight times);
 * - across the '429' chains: four or more sequences, a third of all, on one schedule (no jitter): their
 *   first three waits alike to 5 ms or 2% (a quiet machine), or, for all the sequences together, each
 *   place's waits spread less than a client jittering by 20% of the wait (at most 100 ms) would spread them
 *   (chance under 1 in 1000; load only widens the spread, see schedule-shape.ts).
 * One behaviour: each schedule is one violation, with the chains that show it counted.
 */
import type { JournalEntry } from '../../journal/journal.ts';
import { describe, firstWhere, intervalsOf, retryChains, waitFloorsOf } from '../journal-facts.ts';
import { type FailureClass, failureClassOf, JUDGED_AS, judgedAs } from '../rule-readings/failure-class.ts';
import {
  chanceOfQuickRetriesAnywhere,
  FIRST_STEP_MS,
  NO_WAIT_CHANCE,
  NO_WAIT_MS,
} from '../rule-readings/quick-retries.ts';
import { EARLY_SPIKES, flatSchedule, lowCeiling } from '../rule-readings/schedule-growth.ts';
import {
  chanceOfSpread,
  chanceText,
  fixedTail,
  LEAST_JITTER_FRACTION,
  leastJitter,
  NO_JITTER_CHANCE,
  spreadOf,
} from '../rule-readings/schedule-shape.ts';
import { stallsDecided } from '../rule-readings/stall-decided.ts';
import {
  jitterUnseen,
  LOCK_STEP_SEQUENCES,
  same,
  steady,
  unguided,
  waitsUnseen,
} from '../rule-readings/unguided-waits.ts';
import type { ClientRule, Finding } from '../types.ts';

/**
 * Waits of two sequences this close are "alike": 5 ms or 2% (10 ms past 500 ms). Tighter than `same`: libraries jitter by as
 * little as 20% (axios-retry's exponentialDelay adds 0-20%), and at 5% three of its sequences would match by
 * chance about 1% of the time; at 2% it is 0.01%.
 */
export const ALIKE_FRACTION = 0.02;
// A tenth of the least jitter (schedule-shape.ts): 2% up to 500 ms, then 10 ms (got jitters by 0-100 ms).
const alikeWait = (a: number, b: number) =>
  Math.abs(a - b) <= Math.max(5, (ALIKE_FRACTION / LEAST_JITTER_FRACTION) * leastJitter(Math.max(a, b)));
// Retries looked at for the no-wait count (bounds the work on huge journals).
const MOST_RETRIES_COUNTED = 2000;

export interface Sequence {
  chain: JournalEntry[];
  intervals: number[];
}
// The first waits of a list, `…` for the rest: a chain of forty retries reads in one line.
const ms = (values: number[]) =>
  `${values
    .slice(0, 8)
    .map((v) => `${Math.round(v)}`)
    .join(', ')}${values.length > 8 ? ', …' : ''}`;

const RETRIES_OF_ONE_REQUEST =
  'taken as retries of one request: the same meaning (request_key), each sent after the previous attempt’s failure was answered';

/**
 * What one retry chain's waits can show, how many retries it takes to show it, and whether it is a lack of
 * jitter (judged of '429' chains only) rather than of backoff (judged of every chain).
 */
const SCHEDULES = [
  {
    // Three retries that never waited past NO_WAIT_MS: no backoff (zero delay, as axios-retry's default),
    // whatever noise spread them. Full jitter on a first bound of b ms waits that little three times in a
    // row with probability (50/b)(25/b)(12.5/b): 1/512 for b = 200 ms, 1/1728 for ky's 300 ms.
    retries: 3,
    jitter: false,
    shows: (intervals: number[], _floors: number[]) => intervals.every((d) => d <= NO_WAIT_MS),
    says: (intervals: number[]) =>
      `came without waiting (${ms(intervals)} ms, none over ${NO_WAIT_MS} ms): no backoff`,
  },
  {
    // A fixed sleep is no backoff, whatever the failure: after a 429 it is no jitter either.
    retries: 3,
    jitter: false,
    // Alike as measured, and no room for a backoff between them: even net of the stalls meanwhile (the least
    // each wait may have been meant), the shortest times 1.5 exceeds the longest (timers due in one stall
    // fire together, so stalled waits come out alike whatever the client meant).
    shows: (intervals: number[], floors: number[]) =>
      intervals.every((d) => same(d, intervals[0] as number)) &&
      Math.max(...intervals) < 1.5 * Math.min(...floors),
    says: (intervals: number[], failure: FailureClass) =>
      `came at identical intervals (${ms(intervals)} ms): no backoff${failure === '429' ? ' and no jitter' : ''}`,
  },
  {
    // Four or more waits at the end of the chain held at one value (its cap) without jitter: a fixed-interval
    // retry loop once the cap is reached, however the first waits grew (urllib3's backoff_max).
    // A lack of jitter only: a 5xx chain held at its cap (urllib3 on 5xx) backed off, as section 7 asks.
    retries: 4,
    jitter: true,
    shows: (intervals: number[], floors: number[]) =>
      fixedTail(intervals) !== undefined && steady(intervals, floors),
    says: (intervals: number[]) => {
      const tail = fixedTail(intervals) as NonNullable<ReturnType<typeof fixedTail>>;
      return `reached ${Math.round(tail.least)} ms and stayed there (${ms(intervals)} ms): the last ${tail.retries} waits spread ${Math.round(tail.spread)} ms, where a client jittering by 20% (at most 100 ms) would spread them more (chance ${chanceText(tail.chance)}): a fixed-interval retry loop past the cap, no jitter`;
    },
  },
  {
    // Five retries whose waits never grew past 1.5x the first: exponential backoff doubles, and full jitter
    // (a uniform wait up to the doubled bound) looks like that about 0.1% of the time (0.15% capped at ten
    // times the base; four retries would be 1.4%), while scheduling noise cannot fake the growth.
    retries: 5,
    jitter: false,
    // The shortest of the first three waits is the base: load spikes on the first two cannot fake it. Each
    // read net of the stalls the gateway saw meanwhile (`waitFloorsOf`): steady load, lengthening every
    // wait alike, cannot fake it either.
    shows: (intervals: number[], floors: number[]) =>
      Math.max(...intervals) <= 1.5 * Math.min(...floors.slice(0, 3)),
    says: (intervals: number[]) => `did not back off: waits of ${ms(intervals)} ms never grew`,
  },
] as const;

/** Whether a schedule is asked of a chain of this class: backoff of every chain, jitter of '429' ones. */
const askedOf = (failure: FailureClass) => (s: (typeof SCHEDULES)[number]) => !s.jitter || failure === '429';

/**
 * What one retry chain's own waits show, by what its failure class asks (failure-class.ts): no wait at all,
 * identical intervals, or waits that never grew; and, after a 429, a cap held without jitter.
 */
export function scheduleFinding({ chain, intervals }: Sequence): Finding | undefined {
  const failure = failureClassOf(chain);
  const floors = waitFloorsOf(chain);
  const schedule = SCHEDULES.filter(askedOf(failure)).find(
    (s) => intervals.length >= s.retries && s.shows(intervals, floors),
  );
  return schedule
    ? {
        message: `${intervals.length} retries of ${describe(chain[0] as JournalEntry)}, ${JUDGED_AS[failure]}, ${schedule.says(intervals, failure)}`,
        requests: chain,
        inference: RETRIES_OF_ONE_REQUEST,
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
  // The '429' chains' sequences: only they are compared for jitter (lock-step, spread).
  const sequences: Sequence[] = [];
  const flagged = SCHEDULES.map(() => [] as Finding[]);
  const eligible = SCHEDULES.map(() => 0);
  // Every retry's place in its chain, and the quick ones (no wait at all).
  const counted: { place: number; wait: number; floor: number }[] = [];
  const quick: { chain: JournalEntry[]; retry: JournalEntry; wait: number; place: number }[] = [];
  const unguidedChains = retryChains(entries, unguided);
  for (const chain of unguidedChains) {
    const intervals = intervalsOf(chain);
    const floors = waitFloorsOf(chain);
    const failure = failureClassOf(chain);
    const asked = askedOf(failure);
    intervals.forEach((wait, k) => {
      if (counted.length >= MOST_RETRIES_COUNTED) return;
      counted.push({ place: k + 1, wait, floor: floors[k] as number });
      if (wait <= NO_WAIT_MS) quick.push({ chain, retry: chain[k + 1] as JournalEntry, wait, place: k + 1 });
    });
    if (intervals.length >= 3 && failure === '429' && steady(intervals, floors))
      sequences.push({ chain, intervals });
    SCHEDULES.forEach((s, k) => {
      if (asked(s) && intervals.length >= s.retries) eligible[k] = (eligible[k] as number) + 1;
    });
    const k = SCHEDULES.findIndex(
      (s) => asked(s) && intervals.length >= s.retries && s.shows(intervals, floors),
    );
    if (k >= 0) flagged[k]?.push(scheduleFinding({ chain, intervals }) as Finding);
  }
  // One finding per schedule: the chains that show it are one behaviour of the client, counted.
  const findings = flagged.flatMap((list, k): Finding[] => {
    const first = list[0];
    // A third of the chains, and two of them when there are more: one chain in three matching by chance (a
    // 1 in 1000 draw) is not a schedule.
    const chains = eligible[k] as number;
    if (!first || 3 * list.length < chains || (chains > 1 && list.length < 2)) return [];
    return [
      list.length === 1
        ? first
        : {
            message: `${list.length} retry chains: ${first.message}${list.length > 1 ? ` (the first of them; ${list.length - 1} more alike)` : ''}`,
            requests: list.flatMap((f) => f.requests),
            count: list.length,
            inference: RETRIES_OF_ONE_REQUEST,
          },
    ];
  });
  const places = counted.map((r) => r.place);
  const chance = quick.length > 0 ? chanceOfQuickRetriesAnywhere(places, quick) : 1;
  if (chance < NO_WAIT_CHANCE && findings.length === 0) {
    const chains = new Set(quick.map((q) => q.chain));
    const first = quick[0] as (typeof quick)[number];
    const waits = quick.slice(0, 8).map((q) => q.wait);
    findings.push({
      message: `${quick.length} of ${places.length} retries ${judgedAs([...chains])} came without any wait (${ms(waits)}${quick.length > waits.length ? ', …' : ''} ms after the failure's answer, none over ${NO_WAIT_MS} ms), over ${chains.size} request(s), first ${describe(first.retry)} after ${describe(first.chain[0] as JournalEntry)}: no backoff`,
      requests: [...new Set(quick.flatMap((q) => q.chain))],
      count: quick.length,
      inference: `taken as retries: the same request (same meaning) sent again after its failure was answered; a client backing off from ${FIRST_STEP_MS} ms or more would send this many that quickly with a chance of ${chance < 1e-6 ? 'under 1 in a million' : `1 in ${Math.round(1 / chance)}`}`,
    });
  }
  const flat = findings.length === 0 ? flatFinding(unguidedChains, counted) : undefined;
  if (flat) findings.push(flat);
  return { findings, sequences };
}

/**
 * Waits that never grow (schedule-growth.ts): the later retries (third and on) wait no longer, next to the
 * first two, than the least-growing backoff (full jitter, bound f, 2f, then 4f, any f) would show with a
 * chance under NO_JITTER_CHANCE (`flatSchedule`: scale-free, exact, read past load spikes); or every wait
 * (but one or two a spike may have lengthened) stayed under a ceiling that the same backoff from FIRST_STEP_MS
 * (100, 200, then 400 ms) passes, with a chance under NO_JITTER_CHANCE (`lowCeiling`).
 */
function flatFinding(
  allChains: readonly JournalEntry[][],
  counted: readonly { place: number; wait: number; floor: number }[],
): Finding | undefined {
  const growth = flatSchedule(counted);
  const low = lowCeiling(counted, FIRST_STEP_MS);
  const flat = growth !== undefined && growth.chance < NO_JITTER_CHANCE;
  if (!flat && !(low.chance < NO_JITTER_CHANCE)) return undefined;
  const chains = allChains.filter((c) => c.length > 1);
  const first = `(first ${describe(chains[0]?.[0] as JournalEntry)})`;
  const lead = `${counted.length} retries over ${chains.length} request(s) ${judgedAs(chains)}`;
  const spikes = (n: number) => (n === 0 ? '' : ` (but the ${n} longest, taken as load spikes)`);
  const reference = 'full jitter, f at the first retry, 2f at the second, 4f from the third on';
  if (flat && growth) {
    const firstWaits = counted.filter((r) => r.place <= 2).map((r) => r.wait);
    const laterWaits = counted.filter((r) => r.place >= 3).map((r) => r.wait);
    return {
      message: `${lead} did not back off: the ${growth.laterRetries} waits from the 3rd retry on (${ms(laterWaits)} ms) stayed${spikes(growth.spikes)} at most ${Math.round(growth.late)} ms, where a backoff grows past 4 times its first two retries' waits (${ms(firstWaits)} ms; the second halved and the longest ${EARLY_SPIKES} left out: ${Math.round(growth.early)} ms): the bound never grew ${first}`,
      requests: chains.flat().slice(0, 24),
      count: chains.length,
      inference: `${RETRIES_OF_ONE_REQUEST}; a client whose bound grows by the least a backoff does (${reference}, for any f) keeps its later waits this short next to its first ones with a chance of ${chanceText(growth.chance)}`,
    };
  }
  const deepest = Math.max(...counted.map((r) => r.place));
  return {
    message: `${lead} ${low.spikes === 0 ? 'never' : `but ${low.spikes}`} waited more than ${Math.round(low.ceiling)} ms (up to the ${deepest}th retry of a request): the waits stay under a low ceiling instead of growing, no backoff ${first}`,
    requests: chains.flat().slice(0, 24),
    count: chains.length,
    inference: `${RETRIES_OF_ONE_REQUEST}; a client backing off from ${FIRST_STEP_MS} ms (the least common first step) whose bound grows by the least a backoff does (${reference}: ${FIRST_STEP_MS}, ${2 * FIRST_STEP_MS}, then ${4 * FIRST_STEP_MS} ms) stays this low with a chance of ${chanceText(low.chance)}`,
  };
}

/**
 * Whether sequences alike one base are a fixed schedule, on which many clients would retry in lock-step:
 * four of them at least, and a third or more of all sequences. A client without jitter puts nearly every
 * sequence on its one schedule. A jittered one matches a base by chance: about 1% of pairs for axios-retry's
 * 20% jitter, so three alike out of five happen 0.3% of the time and four alike 0.001%; over fifty sequences
 * a few match, never a third of them.
 */
export const lockStep = (matching: number, sequences: number) =>
  matching >= LOCK_STEP_SEQUENCES && 3 * matching >= sequences;

/** Whether two retry sequences are on one schedule: their first three waits alike. */
export const alike = (a: number[], b: number[]) =>
  a.slice(0, 3).every((d, k) => alikeWait(d, b[k] as number));

/** The finding for sequences that retried on one schedule. */
export const lockStepFinding = (matching: Sequence[]): Finding => ({
  message: `${matching.length} retry sequences ${JUDGED_AS['429']} used the same waits (${matching.map((m) => `${ms(m.intervals.slice(0, 3))} ms`).join('; ')}): backoff without jitter`,
  requests: matching.flatMap((m) => m.chain).slice(0, 12),
});

/**
 * All sequences (four or more) on one schedule, told by the spread of their waits place by place rather
 * than by closeness: each place's waits spread less than a client jittering by 20% (at most 100 ms) would spread
 * them (20% of the wait, at most 100 ms; chance under NO_JITTER_CHANCE over the places compared, up to six). Load widens the spread, so a
 * ±1 ms jitter measured through 21 ms of noise still shows, and a jittered client is never made to look fixed.
 */
export function spreadFinding(sequences: readonly Sequence[]): Finding | undefined {
  if (sequences.length < LOCK_STEP_SEQUENCES) return undefined;
  const places = Math.min(6, ...sequences.map((s) => s.intervals.length));
  const groups = Array.from({ length: places }, (_, k) => sequences.map((s) => s.intervals[k] as number));
  const chance = chanceOfSpread(groups);
  if (!(chance < NO_JITTER_CHANCE)) return undefined;
  const shape = groups
    .map((g) => {
      const { least, spread } = spreadOf(g);
      return `${Math.round(least)}+${Math.round(spread)}`;
    })
    .join(', ');
  return {
    message: `${sequences.length} retry sequences ${JUDGED_AS['429']} kept one schedule (each place's least wait + spread: ${shape} ms): backoff without jitter`,
    requests: sequences.flatMap((s) => s.chain).slice(0, 24),
    count: sequences.length,
    inference: `${RETRIES_OF_ONE_REQUEST}; a client jittering each wait by 20% of it (at most 100 ms) spreads ${sequences.length} sequences this little with a chance of ${chanceText(chance)}`,
  };
}

export const backoffWithJitter: ClientRule = {
  id: 'backoff-with-jitter',
  title:
    'Retries after a 429 without Retry-After back off exponentially with jitter; retries after a 5xx or a dropped connection back off',
  specRef: [
    {
      section: 7,
      note: '429 without Retry-After: exponential backoff with jitter; 5xx: retry with backoff, no jitter asked',
    },
  ],
  // Waits mostly the machine's; or waits that pass only as lengthened by the loop's stalls (net of them, the
  // schedule breaks the rule: a flat one grown by a stall on its first wait, quick retries slowed past 50 ms).
  unobserved: (ctx) =>
    waitsUnseen(ctx.entries) ?? stallsDecided(backoffWithJitter.judge, ctx) ?? jitterUnseen(ctx.entries),
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
        return findings;
      }
    }
    // One behaviour, one violation: only when no other schedule was found.
    const spread = findings.length === 0 ? spreadFinding(sequences) : undefined;
    if (spread) findings.push(spread);
    return findings;
  },
};
