import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../test/support/seeded-random.ts';
import { recordedEntry } from '../../../test/support/synthetic-journal.ts';
import { loadConfig } from '../../config/load-config.ts';
import type { JournalEntry } from '../../journal/journal.ts';
import { loadCorpus } from '../../providers/corpus.ts';
import { backoffWithJitter } from '../rules/backoff-with-jitter.ts';
import { DEFAULT_REPORT_OPTIONS } from '../types.ts';
import { chanceOfFlat, flatSchedule } from './schedule-growth.ts';

/*
 * Whether a schedule grows, judged from synthetic journals over many seeds (the same model as
 * ../rules-held-out.test.ts): times are injected, and load is positive noise added to every measured wait,
 * 0-25 ms, plus occasional spikes of 200-500 ms (each wait with chance 1 in 50, at most one a journal: two
 * spikes in fifteen waits can hide a flat schedule, a miss, never a false flag). A seed reproduces a journal exactly; no verdict depends on this machine's speed.
 */

const corpus = loadCorpus(loadConfig().corpus);
const judge = (entries: JournalEntry[]) =>
  backoffWithJitter.judge({
    agent: 'a',
    entries,
    rateLimitRules: [],
    corpus,
    options: DEFAULT_REPORT_OPTIONS,
  });

const random = seededRandom;

const SEEDS = Array.from({ length: 500 }, (_, k) => k + 1);
const LOAD_MS = 25;
const SPIKE_CHANCE = 1 / 50;
const MOST_SPIKES = 1;

/** A call retried on 503s, the attempts `waits` apart, each answered in 1 ms; all but the last fail. */
function chain(key: string, start: number, waits: number[]) {
  let t = start;
  return Array.from({ length: waits.length + 1 }, (_, k) => {
    const entry = recordedEntry(t, {
      method: 'POST',
      path: '/v1/web/search',
      operation: 'web.search',
      status: k < waits.length ? 503 : 200,
      request_key: key,
      request_fingerprint: key,
    });
    t += 1 + (waits[k] ?? 0);
    return entry;
  });
}

interface Schedule {
  name: string;
  backsOff: boolean;
  calls: number;
  retries: number;
  /** The client's own k-th wait (k from 0). */
  wait: (k: number, rand: () => number) => number;
}

const SCHEDULES: Schedule[] = [
  {
    // The catalogue's retry-with-attempt-field: equal jitter from 40 ms, step capped at 200 ms.
    name: 'equal jitter from 40 ms, step capped at 200 ms (grows, then a jittered cap)',
    backsOff: true,
    calls: 1,
    retries: 7,
    wait: (k, rand) => {
      const step = Math.min(200, 40 * 2 ** k);
      return step / 2 + (rand() * step) / 2;
    },
  },
  {
    // The catalogue's full-jitter-capped-100ms.
    name: 'full jitter capped at 100 ms from the first retry (never grows)',
    backsOff: false,
    calls: 3,
    retries: 5,
    wait: (_k, rand) => 100 * rand(),
  },
  {
    // The catalogue's full-jitter-capped-1s.
    name: 'full jitter from 100 ms doubling to 1 s',
    backsOff: true,
    calls: 3,
    retries: 4,
    wait: (k, rand) => Math.min(1000, 100 * 2 ** k) * rand(),
  },
  {
    name: 'constant 50 ms, no jitter',
    backsOff: false,
    calls: 3,
    retries: 5,
    wait: () => 50,
  },
  {
    name: 'exponential 200/400/800/1600 ms with 20% jitter',
    backsOff: true,
    calls: 3,
    retries: 4,
    wait: (k, rand) => 200 * 2 ** k * (0.8 + 0.4 * rand()),
  },
];

/** Flat at a scale no ceiling catches: only its own first waits tell (scale-free, exact chance). */
const FLAT_2S: Schedule = {
  // Flat at a scale no ceiling catches: only its own first waits tell.
  name: 'full jitter on a constant 2 s bound (never grows)',
  backsOff: false,
  calls: 6,
  retries: 8,
  wait: (_k, rand) => 2000 * rand(),
};

/** A seed's journal: the schedule's waits plus load (noise, and up to MOST_SPIKES spikes). */
function journal(schedule: Schedule, seed: number) {
  const rand = random(seed);
  let spikes = 0;
  const load = () => {
    const spike = spikes < MOST_SPIKES && rand() < SPIKE_CHANCE;
    if (spike) spikes++;
    return rand() * LOAD_MS + (spike ? 200 + 300 * rand() : 0);
  };
  const entries = Array.from({ length: schedule.calls }, (_, c) =>
    chain(
      `key_${seed}_${c}`,
      c * 60_000,
      Array.from({ length: schedule.retries }, (_, k) => schedule.wait(k, rand) + load()),
    ),
  ).flat();
  return entries.map((e, k) => ({ ...e, seq: k + 1 }));
}

describe('backoff-with-jitter: a schedule backs off when its bound grows, whatever its step and cap', () => {
  for (const schedule of SCHEDULES) {
    it(`${schedule.name}: ${schedule.backsOff ? 'passes' : 'is flagged'} on every one of ${SEEDS.length} seeds, through load`, () => {
      const wrong: string[] = [];
      for (const seed of SEEDS) {
        const findings = judge(journal(schedule, seed));
        if ((findings.length === 0) !== schedule.backsOff)
          wrong.push(`seed ${seed}: ${findings.map((f) => f.message).join(' | ') || 'no finding'}`);
      }
      expect(wrong.slice(0, 3), `${wrong.length} wrong verdicts of ${SEEDS.length}`).toEqual([]);
    });
  }

  it('a jittered constant 2 s bound, six calls of eight retries, is caught by its shape alone on nearly every seed', () => {
    // Its power, not its error: a miss is a client the chance could not tell from a backoff growing 4x.
    const caught = SEEDS.filter((seed) => judge(journal(FLAT_2S, seed)).length > 0).length;
    expect(caught / SEEDS.length).toBeGreaterThanOrEqual(0.99);
  });

  it('the findings name what they read and the reference behind the chance', () => {
    const named = (name: string) => SCHEDULES.find((s) => s.name.startsWith(name)) as Schedule;
    // A constant bound: flat next to its own first waits, whatever its scale.
    const [flat] = judge(journal(FLAT_2S, 1));
    expect(flat?.message).toMatch(
      /did not back off: the 36 waits from the 3rd retry on .* the bound never grew/,
    );
    expect(flat?.inference).toMatch(
      /f at the first retry, 2f at the second, 4f from the third on, for any f/,
    );
    const [low] = judge(journal(named('full jitter capped at 100 ms'), 1));
    expect(`${low?.message} ${low?.inference}`).toMatch(
      /did not back off|under a low ceiling instead of growing/,
    );
    expect(low?.inference).toMatch(/2f at the second, 4f from the third on/);
  });
});

describe('the chance behind it (exact, whatever the first step)', () => {
  it('the largest of nL later scaled waits under t times the largest of nE first ones: t^nL nE / (nE + nL)', () => {
    expect(chanceOfFlat(6, 9, 0.3, 0, 0)).toBeCloseTo(0.3 ** 9 * (6 / 15), 12);
    expect(chanceOfFlat(6, 9, 1, 0, 0)).toBe(1);
    // At one ratio: measured against a lower first wait (one left out) it is rarer; letting later ones pass,
    // commoner.
    expect(chanceOfFlat(6, 9, 0.3, 1, 0)).toBeLessThan(chanceOfFlat(6, 9, 0.3, 0, 0));
    expect(chanceOfFlat(6, 9, 0.3, 1, 1)).toBeGreaterThan(chanceOfFlat(6, 9, 0.3, 1, 0));
  });

  it('matches a simulation of the reference backoff (full jitter, f, 2f, then 4f)', () => {
    const rand = random(99);
    const runs = 20_000;
    let below = 0;
    for (let run = 0; run < runs; run++) {
      const first = [0, 0, 0, 1, 1, 1].map((k) => 2 ** k * rand()).map((w, k) => w / 2 ** (k < 3 ? 0 : 1));
      const later = Array.from({ length: 9 }, () => (4 * rand()) / 4);
      const x = [...first].sort((a, b) => b - a)[1] as number;
      const y = [...later].sort((a, b) => b - a)[1] as number;
      if (y <= 0.6 * x) below++;
    }
    expect(Math.abs(below / runs - chanceOfFlat(6, 9, 0.6, 1, 1))).toBeLessThan(0.01);
  });

  it('is scale-free: the same schedule at 10x the step reads the same', () => {
    const waits = [30, 70, 20, 90, 40, 100, 60, 50, 80, 25, 45, 95];
    const retries = waits.map((wait, k) => ({ place: (k % 4) + 1, wait }));
    const tenfold = retries.map((r) => ({ ...r, wait: 10 * r.wait }));
    expect(flatSchedule(tenfold)?.chance).toBeCloseTo(flatSchedule(retries)?.chance as number, 12);
    // Too few first or later retries to compare: no reading.
    expect(flatSchedule(retries.slice(0, 5))).toBeUndefined();
  });
});
