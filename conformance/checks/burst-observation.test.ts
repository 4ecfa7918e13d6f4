import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../model/suite-request.ts';
import { type BurstObservation, burstScript, noRateLimitSeen, retryTransient } from './burst-observation.ts';
import type { CheckContext } from './check-contract.ts';
import { no5xxUnderBurst } from './no-5xx-under-burst.ts';
import { rateLimitBurst } from './rate-limit-burst.ts';

/** A burst of `counts[path]` answered requests per path, as observeBurst records them. */
function burstOf(counts: Record<string, number>): BurstObservation {
  const exchanges = Object.entries(counts).flatMap(([path, count]) =>
    Array.from({ length: count }, (_, i) => ({
      receivedAt: i,
      exchange: {
        request: { method: 'POST', path },
        url: `http://127.0.0.1:1${path}`,
        credential: 'valid',
        key: `POST ${path} valid`,
        sentHeaders: [['content-type', 'application/json']],
        response: { status: 200, headers: {}, text: '{}', json: {} },
        attempts: 1,
        rateLimitExhausted: false,
      } as Exchange,
    })),
  );
  const requests = exchanges.length;
  return {
    exchanges,
    rateLimited: [],
    refusals: [],
    transient: [],
    unsignalled: [],
    serverErrors: [],
    limited: [],
    repeatRefused: [],
    requests,
    budget: requests,
  };
}

/** Runs the script with a `curl` that only prints which path it was asked for; returns how many per path. */
function sent(script: string): Record<string, number> {
  const fake = 'curl() { for a in "$@"; do case "$a" in http*) echo "$a";; esac; done; }';
  const run = spawnSync('bash', ['-c', `${fake}\n${script}`], { encoding: 'utf8', timeout: 30_000 });
  expect(run.status).toBe(0);
  const counts: Record<string, number> = {};
  for (const line of run.stdout.trim().split('\n')) {
    const [count, path] = line.trim().split(/\s+/);
    counts[(path as string).replace(/'/g, '').replace('http://127.0.0.1:1', '')] = Number(count);
  }
  return counts;
}

describe('burstScript', () => {
  it('sends exactly as many requests per call as the burst did, in waves of at most 20 (45 is 20 + 20 + 5, not 60)', () => {
    const counts = { '/v1/web/search': 45, '/v1/web/fetch': 7, '/v1/whoami': 40 };
    const script = burstScript(burstOf(counts));
    expect(sent(script)).toEqual(counts);
    expect(script).toContain('# The burst as the suite sent it (92 requests, waves of 20 at once)');
    const waves = [...script.matchAll(/for i in \$\(seq 1 (\d+)\)/g)].map((m) => Number(m[1]));
    expect(Math.max(...waves)).toBeLessThanOrEqual(20);
  });

  it('one request is one request', () => {
    expect(sent(burstScript(burstOf({ '/v1/whoami': 1 })))).toEqual({ '/v1/whoami': 1 });
  });
});

/** A burst of 100 answers: `spec` says how many of each kind (the rest are 200). */
function judged(spec: {
  limited?: number;
  shed?: number;
  unsignalled?: number;
  persisted?: number;
  okRateLimited?: number;
}): BurstObservation {
  const burst = burstOf({ '/v1/whoami': 100 });
  const at = (i: number, status: number, extra: Partial<Exchange> = {}, json: unknown = {}) => {
    const timed = burst.exchanges[i] as BurstObservation['exchanges'][number];
    timed.exchange = {
      ...timed.exchange,
      ...extra,
      response: { ...timed.exchange.response, status, json, text: JSON.stringify(json) },
    };
    return timed;
  };
  let i = 0;
  const take = (n = 0, make: (k: number) => BurstObservation['exchanges'][number]) =>
    Array.from({ length: n }, () => make(i++));
  burst.rateLimited = take(spec.limited, (k) => at(k, 429, {}, { code: 'rate_limited' }));
  const shed = take(spec.shed, (k) => ({
    ...at(k, 200, { transientRetries: 1, transientStatus: 503 }),
    signalled: true,
  }));
  burst.unsignalled = take(spec.unsignalled, (k) =>
    at(k, 200, { transientRetries: 1, transientStatus: 500 }),
  );
  burst.serverErrors = take(spec.persisted, (k) => at(k, 503, { transientRetries: 3, transientStatus: 503 }));
  burst.refusals = take(spec.okRateLimited, (k) => at(k, 200, {}, { code: 'rate_limited' }));
  burst.transient = [...shed, ...burst.unsignalled, ...burst.serverErrors];
  return burst;
}

const judge = (check: typeof no5xxUnderBurst, burst: BurstObservation) =>
  check.run({ memo: async () => burst, log: () => {} } as unknown as CheckContext);

describe('the burst verdicts are functions of what the gateway did, not of how many requests crossed a threshold', () => {
  it('503 + Retry-After that a retry cleared is load shedding: allowed however much of the burst it was', async () => {
    for (const shed of [1, 40, 90]) {
      const outcome = await judge(no5xxUnderBurst, judged({ limited: 5, shed }));
      expect(outcome.verdict, outcome.message).toBe('pass');
    }
  });

  it('a 5xx that persisted through the retries fails, even once', async () => {
    const outcome = await judge(no5xxUnderBurst, judged({ limited: 5, persisted: 1 }));
    expect(outcome.verdict).toBe('fail');
    expect(outcome.message).toMatch(/^Expected 2xx, 429, or a 5xx that a retry clears/);
  });

  it('a rare bare 500 that a retry cleared is tolerated as a 502 would be; 500s as the answer to a burst fail', async () => {
    expect((await judge(no5xxUnderBurst, judged({ limited: 5, unsignalled: 2 }))).verdict).toBe('pass');
    const flood = await judge(no5xxUnderBurst, judged({ limited: 0, unsignalled: 30 }));
    expect(flood.verdict).toBe('fail');
    expect(flood.message).toMatch(/30 of 100 burst requests answered 500 .* without a Retry-After/);
  });

  it('rate_limited under a 200 fails ratelimit.burst-429 (not "no 429 seen"), whatever else the burst met', async () => {
    const outcome = await judge(rateLimitBurst, judged({ okRateLimited: 1 }));
    expect(outcome.verdict).toBe('fail');
    expect(outcome.unobserved).toBeUndefined();
    expect(outcome.message).toMatch(/got 200 .*rate_limited.*Fix: signal a rate limit with the status 429/);
  });
});

describe("a transient 5xx of the burst is retried after the suite's one retry wait (client-waits.ts retryWaitMs)", () => {
  /** Retries `first` against answers given in order; returns the waits slept and the final answer's status. */
  async function retried(
    first: Record<string, string>,
    answers: [number, Record<string, string>][],
    maxWait = 10,
  ) {
    let now = 0;
    const slept: number[] = [];
    const ctx = {
      maxWaitSeconds: maxWait,
      now: () => now,
      sleep: async (ms: number) => {
        slept.push(ms);
        now += ms;
      },
      client: {
        send: async () => {
          const [status, headers] = answers.shift() ?? [200, {}];
          return { ...base, response: { status, headers, text: '{}', json: {} } };
        },
      },
    } as unknown as CheckContext;
    const base = burstOf({ '/v1/whoami': 1 }).exchanges[0]?.exchange as Exchange;
    const final = await retryTransient(ctx, {
      exchange: { ...base, response: { status: 503, headers: first, text: '{}', json: {} } },
      receivedAt: 0,
    });
    return { slept, status: final.exchange.response.status };
  }

  it('waits the Retry-After asked (plus at most 100 ms), the backoff floor when it asks less or too much', async () => {
    const shed = await retried({ 'retry-after': '2' }, [[200, {}]]);
    expect(shed.status).toBe(200);
    expect(shed.slept).toHaveLength(1);
    expect(shed.slept[0]).toBeGreaterThanOrEqual(2000);
    expect(shed.slept[0]).toBeLessThan(2100);
    // Beyond --max-wait-seconds 10: not waited; the first backoff step (250 to 500 ms) is.
    const long = await retried({ 'retry-after': '999' }, [[200, {}]]);
    expect(long.slept[0]).toBeGreaterThanOrEqual(250);
    expect(long.slept[0]).toBeLessThanOrEqual(500);
    // A bare 5xx, twice: the backoff of attempts 1 and 2 (step 500, then 1000 ms), three tries at most.
    const bare = await retried({}, [
      [502, {}],
      [502, {}],
      [502, {}],
      [200, {}],
    ]);
    expect(bare.status).toBe(502);
    expect(bare.slept).toHaveLength(3);
    expect(bare.slept[1]).toBeGreaterThanOrEqual(500);
    expect(bare.slept[1]).toBeLessThanOrEqual(1000);
  });
});

describe('noRateLimitSeen', () => {
  it('says how fast the served requests came, so a limit that refills faster is known not to be met', () => {
    const slow = burstOf({ '/v1/whoami': 100 });
    // Answered over two seconds (one every 20 ms): 50 a second.
    slow.exchanges.forEach((t, i) => {
      t.receivedAt = i * 20;
    });
    expect(noRateLimitSeen(slow).message).toContain('answered over 2.0 s (50 a second');
    // Answered at once: nothing about the pace.
    expect(noRateLimitSeen(burstOf({ '/v1/whoami': 100 })).message).not.toContain('a second');
  });
});
