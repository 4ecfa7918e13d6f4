import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load-config.ts';
import type { RateLimitRule } from '../config/schema.ts';
import type { JournalEntry } from '../journal.ts';
import { loadCorpus } from '../tools/corpus.ts';
import { backoffWithJitter } from './rules/backoff-with-jitter.ts';
import { honorRetryAfter } from './rules/honor-retry-after.ts';
import { noParallelStorm } from './rules/no-parallel-storm.ts';
import { noRetryOnAccessDenied } from './rules/no-retry-on-access-denied.ts';
import { refreshInvalidToken } from './rules/refresh-invalid-token.ts';
import { retryCap } from './rules/retry-cap.ts';
import { type ClientRule, DEFAULT_REPORT_OPTIONS } from './types.ts';

const corpus = loadCorpus(loadConfig().corpus);
const AGENT_RULE: RateLimitRule = {
  name: 'per-agent',
  scope: 'agent',
  algorithm: 'token_bucket',
  limit: 3,
  window_seconds: 1,
};
let seq = 0;
/** A journal entry at `t` ms (gateway and real clock alike), answered after `duration` ms. */
const entry = (t: number, fields: Partial<JournalEntry> = {}): JournalEntry => ({
  seq: ++seq,
  request_id: `r${seq}`,
  at: 1_000_000 + t,
  time: new Date(1_000_000 + t).toISOString(),
  duration_ms: 1,
  real_ms: t,
  method: 'POST',
  path: '/v1/web/search',
  operation: 'web.search',
  status: 200,
  agent: 'a',
  request_fingerprint: 'req_x',
  ...fields,
});
const limited = (t: number, fingerprint: string) =>
  entry(t, {
    status: 429,
    code: 'rate_limited',
    retry_after: '1',
    limit: { rule: 'per-agent', scope: 'agent', key: 'a' },
    request_fingerprint: fingerprint,
  });
/** Arrival times of attempts: the first at `start`, each next one `wait` ms after the previous was answered. */
const attemptTimes = (start: number, waits: number[]) => {
  const times = [start];
  for (const wait of waits) times.push((times.at(-1) as number) + 1 + wait);
  return times;
};
const judge = (rule: ClientRule, entries: JournalEntry[]) =>
  rule.judge({ agent: 'a', entries, rateLimitRules: [AGENT_RULE], corpus, options: DEFAULT_REPORT_OPTIONS });

describe('honor-retry-after', () => {
  it('a retry that waited out its own Retry-After is fine, even inside a later 429 of another request', () => {
    // A and B were refused 20 ms apart; A's retry comes when A's wait ends, 20 ms before B's.
    const entries = [
      limited(0, 'req_a'),
      limited(20, 'req_b'),
      entry(1000, { request_fingerprint: 'req_a' }),
      entry(1020, { request_fingerprint: 'req_b' }),
    ];
    expect(judge(honorRetryAfter, entries)).toEqual([]);
  });

  it('one early request is one violation, however many concurrent 429s it jumped', () => {
    const entries = [
      limited(0, 'req_a'),
      limited(1, 'req_b'),
      limited(2, 'req_c'),
      entry(500, { request_fingerprint: 'req_d' }),
    ];
    const findings = judge(honorRetryAfter, entries);
    expect(findings).toHaveLength(1);
    expect(findings[0]?.requests.map((e) => e.request_fingerprint)).toEqual(['req_a', 'req_d']);
  });

  it('a fresh request, or a retry that jumped its own wait, inside the window is caught', () => {
    expect(
      judge(honorRetryAfter, [limited(0, 'req_a'), entry(500, { request_fingerprint: 'req_c' })]),
    ).toHaveLength(1);
    expect(
      judge(honorRetryAfter, [limited(0, 'req_a'), entry(500, { request_fingerprint: 'req_a' })]),
    ).toHaveLength(1);
  });

  it('requests within the grace after the answer were already in flight; a 5xx binds only retries of its request', () => {
    expect(
      judge(honorRetryAfter, [limited(0, 'req_a'), entry(50, { request_fingerprint: 'req_c' })]),
    ).toEqual([]);
    const fault = entry(0, { status: 503, retry_after: '1', request_fingerprint: 'req_a' });
    expect(judge(honorRetryAfter, [fault, entry(400, { request_fingerprint: 'req_c' })])).toEqual([]);
    expect(judge(honorRetryAfter, [fault, entry(400, { request_fingerprint: 'req_a' })])).toHaveLength(1);
  });

  it('an agent_tool rule binds only its operation', () => {
    const perTool: RateLimitRule = { ...AGENT_RULE, name: 'per-tool', scope: 'agent_tool' };
    const refusal = entry(0, {
      status: 429,
      retry_after: '1',
      limit: { rule: 'per-tool', scope: 'agent_tool', key: 'a|web.search' },
    });
    const whoami = entry(400, { operation: 'whoami', request_fingerprint: 'req_w' });
    const findings = honorRetryAfter.judge({
      agent: 'a',
      entries: [refusal, whoami],
      rateLimitRules: [perTool],
      corpus,
      options: DEFAULT_REPORT_OPTIONS,
    });
    expect(findings).toEqual([]);
  });
});

describe('no-parallel-storm', () => {
  it('retries released together when their own waits end are not a storm; fresh parallel requests are', () => {
    const retries = [
      limited(0, 'req_a'),
      limited(2, 'req_b'),
      limited(4, 'req_c'),
      entry(1005, { request_fingerprint: 'req_a' }),
      entry(1006, { request_fingerprint: 'req_b' }),
      entry(1007, { request_fingerprint: 'req_c' }),
    ];
    expect(judge(noParallelStorm, retries)).toEqual([]);
    const storm = [
      limited(0, 'req_a'),
      ...['d', 'e', 'f', 'g'].map((q, i) => entry(300 + i, { request_fingerprint: `req_${q}` })),
    ];
    expect(judge(noParallelStorm, storm)).toHaveLength(1);
  });
});

describe('retry-cap and backoff-with-jitter', () => {
  it('copies of a request sent together are one attempt', () => {
    const copies = Array.from({ length: 20 }, (_, i) => entry(i * 0.2, { status: 429, retry_after: '1' }));
    expect(judge(retryCap, copies)).toEqual([]);
    const loop = Array.from({ length: 7 }, (_, i) => entry(i * 300, { status: 503 }));
    expect(judge(retryCap, loop)).toHaveLength(1);
  });

  it('two sequences on one schedule may be chance (equal jitter); three are a fixed schedule', () => {
    const chain = (fingerprint: string, start: number, waits: number[]) =>
      attemptTimes(start, waits).map((t) => entry(t, { status: 503, request_fingerprint: fingerprint }));
    const two = [...chain('req_1', 0, [100, 200, 400]), ...chain('req_2', 10_000, [102, 198, 405])];
    expect(judge(backoffWithJitter, two)).toEqual([]);
    const three = [...two, ...chain('req_3', 20_000, [99, 201, 398])];
    expect(judge(backoffWithJitter, three)).toHaveLength(1);
  });

  it('full jitter that happens to shrink is not flagged; waits that never grow over five retries are', () => {
    const at = (waits: number[]) => attemptTimes(0, waits).map((t) => entry(t, { status: 503 }));
    expect(judge(backoffWithJitter, at([300, 120, 900]))).toEqual([]);
    // Four full-jitter waits stay under 1.5x the first about 1.4% of the time: not evidence enough.
    expect(judge(backoffWithJitter, at([700, 180, 950, 610]))).toEqual([]);
    expect(judge(backoffWithJitter, at([200, 180, 150, 210, 190]))).toHaveLength(1);
  });
});

describe('refresh-invalid-token and no-retry-on-access-denied', () => {
  const options = { ...DEFAULT_REPORT_OPTIONS };
  const run = (rule: ClientRule, entries: JournalEntry[]) =>
    rule.judge({ agent: 'a', entries, rateLimitRules: [AGENT_RULE], corpus, options });
  const refused = (t: number, duration: number, fields: Partial<JournalEntry>) =>
    entry(t, { duration_ms: duration, token: 'tok_1', ...fields });

  it('copies in flight when the first refusal was answered are one attempt; a later one is a repeat', () => {
    const expired = { status: 401, code: 'invalid_identity_token' };
    const batch = [refused(0, 5, expired), refused(1, 5, expired), refused(2, 5, expired)];
    expect(run(refreshInvalidToken, batch)).toEqual([]);
    expect(run(refreshInvalidToken, [...batch, refused(40, 1, expired)])).toHaveLength(1);
    const denied = { status: 403, code: 'access_denied' };
    const calls = [refused(0, 5, denied), refused(1, 5, denied), refused(3, 5, denied)];
    expect(run(noRetryOnAccessDenied, calls)).toEqual([]);
    expect(run(noRetryOnAccessDenied, [...calls, refused(6, 1, denied)])).toHaveLength(1);
  });
});
