import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../test/support/seeded-random.ts';
import { recordedEntry } from '../../../test/support/synthetic-journal.ts';
import { loadConfig } from '../../config/load-config.ts';
import type { JournalEntry } from '../../journal/journal.ts';
import { loadCorpus } from '../../providers/corpus.ts';
import { isFailure, keyOf } from '../facts/entry.ts';
import { createReactionFacts } from '../facts/reactions.ts';
import { retryChains } from '../facts/retries.ts';
import { failureClassOf } from '../rule-readings/failure-class.ts';
import { type ClientRule, DEFAULT_REPORT_OPTIONS } from '../types.ts';
import { backoffWithJitter } from './backoff-with-jitter.ts';

/*
 * What section 7's table asks of each failure class, judged from synthetic journals (no timing: every wait
 * is written into the journal): after a 429 without Retry-After, exponential backoff with jitter; after a
 * 5xx (or a dropped connection), retry with backoff, no jitter asked.
 */

const corpus = loadCorpus(loadConfig().corpus);
const judge = (rule: ClientRule, entries: JournalEntry[]) =>
  rule.judge({ agent: 'a', entries, rateLimitRules: [], corpus, options: DEFAULT_REPORT_OPTIONS });
const messages = (entries: JournalEntry[]) => judge(backoffWithJitter, entries).map((f) => f.message);

/**
 * A search whose attempts fail with `statuses` (one per attempt; the last attempt succeeds), each retry
 * `waits[k]` ms after the previous answer (answered in 1 ms). Status 0: a dropped connection.
 */
function chain(key: string, start: number, waits: readonly number[], statuses: readonly number[]) {
  const entries: JournalEntry[] = [];
  let t = start;
  for (let k = 0; k <= waits.length; k++) {
    entries.push(
      recordedEntry(t, {
        method: 'POST',
        path: '/v1/web/search',
        operation: 'web.search',
        status: k < waits.length ? (statuses[k % statuses.length] as number) : 200,
        request_key: key,
        request_fingerprint: key,
      }),
    );
    t += 1 + (waits[k] ?? 0);
  }
  return entries;
}
/** `calls` calls one after another, each retried on `waits` after failures of `statuses`. */
const client = (calls: number, waits: readonly number[], statuses: readonly number[]) =>
  Array.from({ length: calls }, (_, c) => chain(`key_${c}`, c * 60_000, waits, statuses))
    .flat()
    .map((e, k) => ({ ...e, seq: k + 1 }));

// urllib3 Retry(total=5, backoff_factor=0.1, backoff_max=0.4), backoff_jitter 0: the first retry at once,
// then 2f, 4f, held at backoff_max. Ten retries: Retry(total=10).
const URLLIB3 = [0, 200, 400, 400, 400];
const URLLIB3_LONG = [0, 200, 400, 400, 400, 400, 400, 400, 400, 400];

describe('the failure class of a retry chain', () => {
  it('is 429 when any attempt it retried was a 429 without Retry-After, else 5xx (dropped connections too)', () => {
    expect(failureClassOf(chain('k', 0, [100, 200], [503]))).toBe('5xx');
    expect(failureClassOf(chain('k', 0, [100, 200], [0]))).toBe('5xx');
    expect(failureClassOf(chain('k', 0, [100, 200], [429]))).toBe('429');
    expect(failureClassOf(chain('k', 0, [100, 200, 400], [503, 429, 502]))).toBe('429');
    // A 429 at the end of a chain that was not retried sets no wait: the chain's waits followed 5xx.
    const ended = chain('k', 0, [100, 200], [503]);
    ended[2] = { ...(ended[2] as JournalEntry), status: 429 };
    expect(failureClassOf(ended)).toBe('5xx');
  });
});

describe('after 5xx: backoff is judged, jitter is not', () => {
  it('urllib3 on 5xx (unjittered, capped) passes: one long chain, four calls, eight calls', () => {
    expect(messages(client(1, URLLIB3_LONG, [503]))).toEqual([]);
    expect(messages(client(4, URLLIB3, [500, 502, 503, 504]))).toEqual([]);
    expect(messages(client(8, URLLIB3, [503]))).toEqual([]);
  });

  it('an unjittered exponential schedule on 5xx (p-retry, undici RetryAgent) is no lock-step finding', () => {
    expect(messages(client(6, [1000, 2000, 4000], [503]))).toEqual([]);
    expect(messages(client(8, [100, 200, 400, 800], [0]))).toEqual([]);
  });

  it('a fixed 1 s sleep on 5xx, retried four times, is no backoff (named as a 5xx judgement)', () => {
    const [message, ...rest] = messages(client(1, [1000, 1000, 1000, 1000], [503]));
    expect(rest).toEqual([]);
    expect(message).toMatch(
      /after a 5xx or a dropped connection \(§7: retry with backoff, no jitter asked\), came at identical intervals \(1000, 1000, 1000, 1000 ms\): no backoff$/,
    );
  });

  it('no wait at all, and waits that never grow, are caught after 5xx and after dropped connections', () => {
    expect(messages(client(1, [2, 3, 1, 4], [503]))[0]).toMatch(/after a 5xx .* came without waiting/);
    expect(messages(client(6, [2, 1], [0]))[0]).toMatch(
      /12 of 12 retries after a 5xx or a dropped connection .* came without any wait/,
    );
    // A jittered constant bound (60-100 ms) never backs off.
    const flat = [83, 61, 97, 72, 88, 64];
    expect(messages(client(3, flat, [502]))[0]).toMatch(
      /after a 5xx or a dropped connection .* did not back off/,
    );
  });
});

describe('after 429s without Retry-After: backoff and jitter are judged', () => {
  it('the urllib3 schedule is held at its cap without jitter (one chain), in lock-step (several)', () => {
    expect(messages(client(1, URLLIB3_LONG, [429]))[0]).toMatch(
      /after a 429 without Retry-After \(§7: exponential backoff with jitter\), reached 400 ms and stayed there .* no jitter/,
    );
    expect(messages(client(4, URLLIB3, [429]))[0]).toMatch(
      /^4 retry sequences after a 429 without Retry-After .* used the same waits .*: backoff without jitter/,
    );
  });

  it('eight calls of the urllib3 schedule after 429s are one schedule through 15 ms of load (every seed)', () => {
    // The catalogue's urllib3-capped-on-429: its first waits (0 ms) carry any noise, the later ones 0-15 ms.
    for (let seed = 1; seed <= 200; seed++) {
      const rand = seededRandom(seed);
      const entries = Array.from({ length: 8 }, (_, c) =>
        chain(
          `key_${c}`,
          c * 60_000,
          [0, 200, 400, 400].map((w, k) => w + (k === 0 ? 40 : 15) * rand()),
          [429],
        ),
      ).flat();
      expect(messages(entries).join('\n'), `seed ${seed}`).toMatch(/after a 429 .*: backoff without jitter/);
      // The same calls after 503s back off, which is all section 7 asks of a 5xx.
      const after5xx = entries.map((e) => (e.status === 429 ? { ...e, status: 503 } : e));
      expect(messages(after5xx), `5xx seed ${seed}`).toEqual([]);
    }
  });

  it('a fixed sleep after 429s is no backoff and no jitter', () => {
    expect(messages(client(1, [1000, 1000, 1000, 1000], [429]))[0]).toMatch(
      /after a 429 without Retry-After .* identical intervals .*: no backoff and no jitter$/,
    );
  });

  it('a mixed chain with any 429 without Retry-After is judged for jitter', () => {
    expect(messages(client(4, URLLIB3, [503, 429]))[0]).toMatch(
      /4 retry sequences after a 429 .* without jitter/,
    );
    // Four 429 chains and four 5xx chains on one schedule: the 429 ones are compared among themselves.
    const both = [
      ...client(4, URLLIB3, [429]),
      ...client(4, URLLIB3, [503]).map((e) => ({
        ...e,
        real_ms: e.real_ms + 600_000,
        at: e.at + 600_000,
        request_key: `${e.request_key}_5xx`,
        request_fingerprint: `${e.request_fingerprint}_5xx`,
      })),
    ];
    const [message, ...rest] = messages(both);
    expect(rest).toEqual([]);
    expect(message).toMatch(/^4 retry sequences after a 429/);
  });

  it('jittered backoff after 429s passes: 20% jitter (axios-retry) over eight calls', () => {
    const entries = Array.from({ length: 8 }, (_, c) =>
      chain(
        `key_${c}`,
        c * 60_000,
        [200, 400, 800].map((w, k) => w * (1 + (0.2 * ((c * 7 + k * 3) % 10)) / 10)),
        [429],
      ),
    ).flat();
    expect(messages(entries)).toEqual([]);
  });
});

/*
 * A run of the catalogue's full-jitter-capped-100ms over HTTP that passed (issue 33; times as journaled,
 * less 3500 ms): five searches at once, each retried five times after a wait drawn in 0-100 ms, on whichever
 * keep-alive connection the pool hands out. Each row: the call, the status, the connection, the request's
 * place on it, when it was read and when answered. Connections 1-5 were accepted at OPENED; the 4th's first
 * request was read 25 ms after its accept (the program runs in the gateway's process, and load delays it),
 * so a batch was under way when the first 503s were answered.
 */
const OPENED = [66.8, 81.2, 84.2, 86.2, 110.8];
type Row = readonly [
  call: number,
  status: number,
  connection: number,
  place: number,
  t: number,
  written: number,
];
const CAPPED_AT_100: readonly Row[] = [
  [0, 503, 1, 1, 83.3, 83.4],
  [1, 503, 2, 1, 85.6, 85.7],
  [2, 503, 3, 1, 90.6, 90.7],
  [3, 503, 4, 1, 111.7, 111.8],
  [1, 503, 1, 2, 116.9, 116.9],
  [4, 503, 5, 1, 117.4, 117.4],
  [2, 503, 2, 2, 119.4, 119.5],
  [1, 503, 1, 3, 121.0, 121.1],
  [3, 503, 1, 4, 124.6, 124.7],
  [0, 503, 1, 5, 145.2, 145.3],
  [2, 503, 2, 3, 145.9, 145.9],
  [2, 503, 1, 6, 152.9, 153.0],
  [2, 503, 1, 7, 167.5, 167.6],
  [1, 503, 1, 8, 172.4, 172.5],
  [4, 503, 1, 9, 179.8, 179.9],
  [3, 503, 1, 10, 186.9, 187.0],
  [4, 503, 1, 11, 190.4, 190.6],
  [0, 503, 2, 4, 190.8, 190.9],
  [4, 503, 1, 12, 213.0, 213.1],
  [0, 503, 1, 13, 222.8, 222.9],
  [1, 503, 1, 14, 230.2, 230.3],
  [3, 503, 2, 5, 230.8, 230.9],
  [0, 503, 1, 15, 256.7, 256.9],
  [2, 503, 1, 16, 265.1, 265.2],
  [0, 503, 1, 17, 267.0, 267.1],
  [4, 200, 1, 18, 310.7, 311.0],
  [1, 200, 2, 6, 311.0, 311.2],
  [3, 200, 1, 19, 315.9, 316.0],
];

/** A search of call `call` read at `t` on `connection` (its `place`-th request), answered at `written`. */
const onConnection = (...[call, status, connection, place, t, written]: Row) =>
  recordedEntry(t, {
    method: 'POST',
    path: '/v1/web/search',
    operation: 'web.search',
    status,
    request_key: `key_low_cap_${call}`,
    request_fingerprint: `key_low_cap_${call}`,
    connection,
    connection_seq: place,
    connection_opened_ms: OPENED[connection - 1] as number,
    written_ms: written,
    duration_ms: written - t,
  });

describe('retries on a pool’s idle connections while other calls are on the wire', () => {
  const entries = CAPPED_AT_100.map((row) => onConnection(...row));

  it('each retry continues its own call’s chain, however late the batch’s last first call was read', () => {
    const chains = retryChains(entries, isFailure);
    expect(chains.map((c) => c.map(keyOf))).toEqual(
      [0, 1, 2, 3, 4].map((call) =>
        CAPPED_AT_100.filter((row) => row[0] === call).map(() => `key_low_cap_${call}`),
      ),
    );
    // The 503 of call 1 was answered while call 3's first request was on its way (read 25 ms late); the
    // retry on connection 1, 31 ms after that answer, asks for the same search: its retry.
    const [, first, , , retry] = entries as [
      JournalEntry,
      JournalEntry,
      JournalEntry,
      JournalEntry,
      JournalEntry,
    ];
    const facts = createReactionFacts(entries);
    expect(retry.real_ms).toBeLessThan(facts.batchUntil(first));
    expect(facts.isReaction(retry, first, 0)).toBe(true);
  });

  it('a full-jitter backoff capped at 100 ms is flagged', () => {
    const [message, ...rest] = messages(entries);
    expect(rest).toEqual([]);
    expect(message).toMatch(/^14 of 23 retries after a 5xx .* came without any wait .*: no backoff$/);
  });

  it('another request read at that moment is still the batch’s, and a copy read in the answer’s turn is no retry', () => {
    const first = entries[1] as JournalEntry;
    // Another search read at the moment of the retry above, on connection 3 (idle since its 503): sent
    // before call 1's answer for all the journal tells (the batch was under way then).
    const other = onConnection(5, 200, 3, 2, 116.9, 117.0);
    const withOther = [...entries, other].sort((a, b) => a.real_ms - b.real_ms);
    expect(createReactionFacts(withOther).isReaction(other, first, 0)).toBe(false);
    // Two tasks sending the same search at once: the copy on another idle connection is read in the turn
    // of the first's answer (within SAME_TURN_MS): sent together, not a retry.
    const copy = onConnection(1, 503, 3, 2, 85.9, 86.0);
    const withCopy = [...entries.slice(0, 2), copy];
    const copyFacts = createReactionFacts(withCopy);
    expect(copyFacts.sentTogether(copy, first)).toBe(true);
    expect(copyFacts.isReaction(copy, first, 0)).toBe(false);
    expect(retryChains(withCopy, isFailure)).toHaveLength(3);
  });
});
