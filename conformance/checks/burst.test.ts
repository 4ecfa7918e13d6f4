import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../suite-request.ts';
import { type BurstObservation, burstScript } from './burst.ts';

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
