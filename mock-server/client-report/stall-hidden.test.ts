import { describe, expect, it } from 'vitest';
import { fetchRetries503, recordedEntry } from '../../test/support/synthetic-journal.ts';
import { loadConfig } from '../config/load-config.ts';
import type { JournalEntry } from '../journal/journal.ts';
import { loadCorpus } from '../providers/corpus.ts';
import { backoffWithJitter } from './rules/backoff-with-jitter.ts';
import { honorRetryAfter } from './rules/honor-retry-after.ts';
import { noParallelStorm } from './rules/no-parallel-storm.ts';
import { DEFAULT_REPORT_OPTIONS } from './types.ts';

/*
 * Green means seen, the other way round: the gateway's event loop stalling lengthens a client's waits (a
 * timer due in a stall fires when it ends), so an early retry can measure as late and a flat schedule as
 * grown. Read as if the loop had not stalled (each wait net of the stalls the gateway saw), such a journal
 * breaks the rule: the rule is NOT OBSERVED, never PASS. Journals are synthetic (times injected) or copied
 * row by row from catalogue runs beside a CPU burner.
 */

const corpus = loadCorpus(loadConfig().corpus);
const ctx = (entries: JournalEntry[]) => ({
  agent: 'a',
  entries,
  rateLimitRules: [],
  corpus,
  options: DEFAULT_REPORT_OPTIONS,
});
type Runs = [number, number, number, number][];

describe('honor-retry-after, a retry that came in time only as the loop stalled', () => {
  // whoami-first-ignores-agent-fault: whoami answered 503 asking 2 s, twice; the program retries 0.2 s later
  // each time. Its loop saturated (one run of stalls from just after each answer to just before the retry),
  // each retry measures past the 2 s.
  const whoami = (t: number, seq: number, status: number, runs?: Runs) =>
    recordedEntry(t, {
      real_ms: t,
      written_ms: t + 0.5,
      duration_ms: 0.5,
      status,
      code: status === 503 ? 'upstream_unavailable' : undefined,
      retry_after: status === 503 ? '2' : undefined,
      request_key: 'whoami',
      request_fingerprint: 'whoami',
      connection: 1,
      connection_opened_ms: 0,
      connection_seq: seq,
      ...(runs ? { stall_runs: runs } : {}),
    });
  const saturated = [
    whoami(0, 1, 503),
    whoami(2210, 2, 503, [[10, 2205, 2000, 400]]),
    whoami(4430, 3, 200, [
      [10, 2205, 2000, 400],
      [2220, 4420, 2010, 380],
    ]),
  ];

  it('is NOT OBSERVED, naming the retries, when net of the stalls they were early', () => {
    const entries = saturated;
    expect(honorRetryAfter.judge(ctx(entries))).toEqual([]);
    expect(honorRetryAfter.unobserved?.(ctx(entries))).toMatch(
      /^read as if the gateway's event loop had not stalled .* requests #\d+, #\d+, #\d+.*would break it/,
    );
  });

  it('passes when the gateway saw no stall (the guide names it: load the gateway did not see)', () => {
    const quiet = saturated.map(({ stall_runs: _, ...e }) => e as JournalEntry);
    expect(honorRetryAfter.judge(ctx(quiet))).toEqual([]);
    expect(honorRetryAfter.unobserved?.(ctx(quiet))).toBeUndefined();
  });

  it('passes a retry that waited out the Retry-After though a short stall fell at its end', () => {
    // whoami-first-waits-agent-fault: 2.1 s waits, a 30 ms stall under way as each retry was read.
    const entries = [
      whoami(0, 1, 503),
      whoami(2140, 2, 503, [[2100, 2135, 30, 30]]),
      whoami(4280, 3, 200, [
        [2100, 2135, 30, 30],
        [4240, 4275, 30, 30],
      ]),
    ];
    expect(honorRetryAfter.judge(ctx(entries))).toEqual([]);
    expect(honorRetryAfter.unobserved?.(ctx(entries))).toBeUndefined();
  });

  it('still fails a retry early as measured, whatever the stalls', () => {
    const entries = [
      whoami(0, 1, 503),
      whoami(1210, 2, 503, [[10, 1205, 1000, 400]]),
      whoami(2430, 3, 200, [[1220, 2420, 1000, 380]]),
    ];
    expect(honorRetryAfter.judge(ctx(entries)).length).toBe(1);
  });
});

describe('backoff-with-jitter, a flat schedule whose first waits the loop stalled', () => {
  it('fixed-interval-5xx through the proxy at load 12: 250 ms sleeps measured 674, 533, 584, 370 and 316 ms, NOT OBSERVED', () => {
    // Copied row by row (times from the first read): the loop stalled through most of the first two waits.
    const long: Runs = [[122.89, 757.49, 604.6, 522.96]];
    const rows: [number, number, Runs][] = [
      [0, 92.13, [[-517.58, -16.89, 440.69, 353.99]]],
      [766.24, 766.66, long],
      [1300.15, 1300.32, [[122.89, 1280.54, 1037.65, 522.96]]],
      [
        1884.35,
        1884.62,
        [
          [1335.84, 1427.6, 91.76, 91.76],
          [1569.95, 1872.74, 272.79, 271.59],
        ],
      ],
      [2255.08, 2255.41, [[1915.48, 2221.08, 305.6, 305.6]]],
      [
        2571.68,
        2571.91,
        [
          [2295.62, 2301.82, 6.21, 6.21],
          [2450.73, 2491.96, 41.23, 41.23],
        ],
      ],
    ];
    const entries = fetchRetries503(rows);
    expect(backoffWithJitter.judge(ctx(entries))).toEqual([]);
    expect(backoffWithJitter.unobserved?.(ctx(entries))).toMatch(
      /first two waits .* were mostly the gateway's event loop stalling/,
    );
    // The same waits with no stall seen: read as measured (the gateway cannot see load it did not see).
    const quiet = entries.map(({ stall_runs: _, ...e }) => e as JournalEntry);
    expect(backoffWithJitter.unobserved?.(ctx(quiet))).toBeUndefined();
  });

  it('a fixed one-second sleep spread past 50 ms by stalls the gateway saw is NOT OBSERVED, caught when read net of them', () => {
    // fixed-one-second-on-5xx at load 12: waits 1096, 1307, 1145 and 1002 ms, each lengthened by a stall
    // under way when the retry was read.
    let t = 0;
    const rows: [number, number, Runs][] = [[0, 1, []]];
    for (const wait of [1096, 1307, 1145, 1002]) {
      const answered = t + 1;
      t = answered + wait;
      const stalled = wait - 1000;
      rows.push([t, t + 1, stalled > 20 ? [[t - stalled - 2, t - 1, stalled, stalled]] : []]);
    }
    const entries = fetchRetries503(rows);
    expect(backoffWithJitter.judge(ctx(entries))).toEqual([]);
    expect(backoffWithJitter.unobserved?.(ctx(entries))).toMatch(/would break it \(.*identical intervals/);
  });
});

describe('backoff-with-jitter, quick retries and a fixed schedule the stalls spread', () => {
  /** Calls each retried on its own connection: per call, the waits and the stall seen during each. */
  const chains = (calls: readonly (readonly [number, number][])[], status = 503) =>
    calls.flatMap((waits, c) => {
      let t = c * 3;
      const rows = [recordedEntry(t, retryFields(c, 1, status))];
      waits.forEach(([wait, stalled], k) => {
        const answered = t + 1;
        t = answered + wait;
        rows.push(
          recordedEntry(t, {
            ...retryFields(c, k + 2, k === waits.length - 1 ? 200 : status),
            ...(stalled > 0 ? { stall_runs: [[t - stalled - 5, t - 2, stalled, stalled]] as Runs } : {}),
          }),
        );
      });
      return rows;
    });
  const retryFields = (call: number, seq: number, status: number): Partial<JournalEntry> => ({
    method: 'POST',
    path: '/v1/web/search',
    operation: 'web.search',
    status,
    code: status === 503 ? 'upstream_unavailable' : status === 429 ? 'rate_limited' : undefined,
    request_key: `call ${call}`,
    request_fingerprint: `call ${call}`,
    connection: call + 1,
    connection_opened_ms: call * 3 - 1,
    connection_seq: seq,
  });

  it('retries sent at once (axios-retry, no delay) that stalls pushed past 50 ms are NOT OBSERVED', () => {
    // axios-retry-twice-no-delay through the proxy at load 20: waits and the stall the gateway saw in each.
    const calls: [number, number][][] = [
      [
        [12, 0],
        [287, 219],
      ],
      [
        [200, 125],
        [209, 209],
      ],
      [
        [9, 0],
        [19, 0],
      ],
      [
        [3, 0],
        [3, 0],
      ],
      [
        [16, 0],
        [16, 0],
      ],
      [
        [10, 0],
        [61, 14],
      ],
    ];
    const entries = chains(calls);
    expect(backoffWithJitter.judge(ctx(entries))).toEqual([]);
    expect(backoffWithJitter.unobserved?.(ctx(entries))).toMatch(/would break it \(.*without any wait/);
    // Sent at once on a machine that did not stall: caught.
    const quiet = chains(
      calls.map((waits) => waits.map(([wait]): [number, number] => [Math.min(wait, 20), 0])),
    );
    expect(backoffWithJitter.judge(ctx(quiet)).length).toBeGreaterThan(0);
  });

  it('a fixed 0, 200, 400, 400 ms schedule after 429s (urllib3), its waits spread by stalls: jitter NOT OBSERVED', () => {
    const spread: [number, number][][] = [
      [
        [151, 140],
        [248, 30],
        [424, 90],
        [405, 60],
      ],
      [
        [176, 170],
        [1383, 1200],
        [438, 80],
        [436, 50],
      ],
      [
        [39, 0],
        [203, 120],
        [432, 130],
        [576, 280],
      ],
      [
        [12, 0],
        [230, 0],
        [405, 0],
        [408, 310],
      ],
      [
        [4, 0],
        [202, 0],
        [443, 25],
        [530, 100],
      ],
    ];
    const entries = chains(spread, 429);
    expect(backoffWithJitter.judge(ctx(entries))).toEqual([]);
    expect(backoffWithJitter.unobserved?.(ctx(entries))).toMatch(/event loop stalling|had not stalled/);
    // The same schedule, every wait as meant (no stall): caught, no jitter.
    const quiet = chains(
      spread.map((waits) => waits.map((_, k): [number, number] => [[2, 201, 401, 401][k] as number, 0])),
      429,
    );
    expect(backoffWithJitter.judge(ctx(quiet)).length).toBeGreaterThan(0);
  });
});

describe('no-parallel-storm, requests a saturated loop read one by one', () => {
  // storm-after-429 over HTTP at load 20: fifty searches sent at once after a 429, each on a new connection,
  // accepted and read one by one 100-800 ms apart, the loop never catching up (one run of stalls throughout).
  const search = (t: number, connection: number, status: number, runs?: Runs) =>
    recordedEntry(t, {
      real_ms: t,
      written_ms: t + 0.5,
      duration_ms: 0.5,
      method: 'POST',
      path: '/v1/web/search',
      operation: 'web.search',
      status,
      code: status === 429 ? 'rate_limited' : undefined,
      retry_after: status === 429 ? '10' : undefined,
      request_key: `search ${connection}`,
      request_fingerprint: `search ${connection}`,
      connection,
      connection_opened_ms: t - 1,
      connection_seq: 1,
      ...(runs ? { stall_runs: runs } : {}),
    });
  const reads = [0, 420, 980, 1390, 2200];
  const saturated = reads.map((t, k) =>
    search(t, k + 1, 429, k === 0 ? undefined : [[-500, t - 0.5, 500 + t, 700]]),
  );

  it('is NOT OBSERVED when each was read in the run of stalls under way since the answer before it', () => {
    expect(noParallelStorm.judge(ctx(saturated))).toEqual([]);
    expect(noParallelStorm.unobserved?.(ctx(saturated))).toMatch(
      /^3 requests after the 429 of #\d+ .*were each read with the gateway's event loop stalling, not caught up/,
    );
  });

  it('passes the same arrivals when the loop caught up between them (one request at a time, as seen)', () => {
    const caughtUp = reads.map((t, k) =>
      search(t, k + 1, 429, k === 0 ? undefined : [[t - 60, t - 0.5, 50, 50]]),
    );
    expect(noParallelStorm.judge(ctx(caughtUp))).toEqual([]);
    expect(noParallelStorm.unobserved?.(ctx(caughtUp))).toBeUndefined();
  });
});
