import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../test/support/seeded-random.ts';
import { recordedEntry } from '../../../test/support/synthetic-journal.ts';
import { loadConfig } from '../../config/load-config.ts';
import type { JournalEntry } from '../../journal/journal.ts';
import { loadCorpus } from '../../providers/corpus.ts';
import { type ClientRule, DEFAULT_REPORT_OPTIONS } from '../types.ts';
import { backoffWithJitter } from './backoff-with-jitter.ts';
import { failureClassOf } from './failure-class.ts';

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
