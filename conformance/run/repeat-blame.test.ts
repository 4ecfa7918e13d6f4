import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runConformance } from './runner.ts';

const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve)))));

/**
 * A gateway serving every call, except that the `refuseFetch`-th fetch of the run (if any) is refused as a
 * duplicate: a repeat refused once, where retry.sequential's own repeats do not meet it.
 */
async function gateway(refuseFetch?: number) {
  let fetches = 0;
  const server = createServer((req, res) => {
    let status = 200;
    let body: unknown = { ok: true };
    if (req.url === '/v1/whoami') body = { agent_id: 'a', tier: 'free' };
    if (req.url === '/v1/web/fetch') {
      fetches += 1;
      if (fetches === refuseFetch) {
        status = 409;
        body = { code: 'duplicate_request', message: 'seen before' };
      }
    }
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function run(baseUrl: string, only: string[], numRuns = 3, seed = 1) {
  let now = 1_700_000_000_000;
  const report = await runConformance({
    baseUrl,
    token: 'valid-token-valid-token',
    only,
    allowedTools: ['web.fetch'],
    seed,
    numRuns,
    clock: {
      now: () => now,
      sleep: async (ms) => {
        now += ms;
      },
    },
  });
  return Object.fromEntries(report.checks.map((c) => [c.id, c]));
}

const BOTH = ['auth.header-name-case-insensitive', 'retry.sequential'];

describe('a repeat refused as a duplicate is blamed on retry.sequential (spec §4 rule 4), whichever check met it', () => {
  it('retry.sequential fails with the exchange another check met, naming that check; that check says where it was blamed', async () => {
    const checks = await run(await gateway(2), BOTH);
    const met = checks['auth.header-name-case-insensitive'];
    const rule = checks['retry.sequential'];
    expect(met?.verdict).toBe('fail');
    expect(met?.message).toMatch(/Blamed on retry\.sequential \(spec §4 rule 4\)/);
    expect(rule?.verdict).toBe('fail');
    expect(rule?.message).toMatch(
      /^Expected every repeat of a call to answer as the first \(spec §4 rule 4.*got 409 .*duplicate_request.* to POST \/v1\/web\/fetch with the valid token, .*met by auth\.header-name-case-insensitive; its own repeats held/,
    );
    expect(rule?.reproduction?.exchange?.response.status).toBe(409);
    expect(rule?.reproduction?.curl).toMatch(/\/v1\/web\/fetch/);
  });

  it('without that refusal retry.sequential passes on the same gateway (its own repeats never meet it)', async () => {
    const checks = await run(await gateway(), BOTH);
    expect(checks['retry.sequential']?.verdict).toBe('pass');
    expect(checks['auth.header-name-case-insensitive']?.verdict).toBe('pass');
  });

  it('without retry.sequential in the run, the check that met it keeps the retry-safety message and blames no other', async () => {
    const checks = await run(await gateway(2), ['auth.header-name-case-insensitive']);
    const met = checks['auth.header-name-case-insensitive'];
    expect(met?.verdict).toBe('fail');
    expect(met?.message).toMatch(/a repeated call refused as a duplicate \(spec §4 rule 4, retry safety\)/);
    expect(met?.message).not.toMatch(/Blamed on/);
  });
});

/**
 * A gateway that limits the first five fetches of the run (429, Retry-After 1 s: retry.concurrent's first
 * batch of fetches) and refuses the sixth as a duplicate (a "replay guard" taking a call that comes after
 * a pause for a replay): a repeat refused after a wait, never a copy refused for arriving with its twins.
 */
async function afterWaitGateway(refuseEveryRepeat = false) {
  let fetches = 0;
  const server = createServer((req, res) => {
    let status = 200;
    let body: unknown = { ok: true };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (req.url === '/v1/whoami') body = { agent_id: 'a', tier: 'free' };
    if (req.url === '/v1/web/fetch') {
      fetches += 1;
      if (fetches <= 5) {
        status = 429;
        body = { code: 'rate_limited' };
        headers['retry-after'] = '1';
      } else if (fetches === 6 || (refuseEveryRepeat && fetches > 6)) {
        status = 409;
        body = { code: 'duplicate_request' };
      }
    }
    req.resume();
    req.on('end', () => {
      res.writeHead(status, headers);
      res.end(JSON.stringify(body));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('a copy retry.concurrent resent after a 429 and saw refused is a repeat after a wait (spec §4 rule 4)', () => {
  it('retry.concurrent passes (the copies sent at once agreed) and hands it to retry.sequential, which fails with it', async () => {
    const checks = await run(await afterWaitGateway(), ['retry.concurrent', 'retry.sequential']);
    const concurrent = checks['retry.concurrent'];
    expect(concurrent?.verdict).toBe('pass');
    expect(concurrent?.message).toMatch(
      /a copy resent after waiting out a 429 got 409 .*duplicate_request.*Blamed on retry\.sequential/,
    );
    const rule = checks['retry.sequential'];
    expect(rule?.verdict).toBe('fail');
    expect(rule?.message).toMatch(
      /got 409 .*duplicate_request.*met by retry\.concurrent; its own repeats held/,
    );
    expect(rule?.reproduction?.exchange?.response.status).toBe(409);
  });

  it('a batch the limit let through only after a wait is sent again: copies refused at once fail it', async () => {
    // The same gateway refusing every fetch after the first served one: the resent copies are handed over,
    // and the batch sent again (at its first attempt this time) is refused: retry.concurrent's own failure.
    // One generated case, which with seed 2 is not a fetch, besides those tried on every seed (each endpoint,
    // five copies): nothing but the batch sent again meets the refusal (with one round this check passes).
    const checks = await run(await afterWaitGateway(true), ['retry.concurrent', 'retry.sequential'], 1, 2);
    const concurrent = checks['retry.concurrent'];
    expect(concurrent?.verdict).toBe('fail');
    expect(concurrent?.message).toMatch(
      /^Expected the same outcome for every repeat of \d concurrent POST \/v1\/web\/fetch/,
    );
  });

  it('without retry.sequential in the run, retry.concurrent reports it itself, as a failure', async () => {
    const checks = await run(await afterWaitGateway(), ['retry.concurrent']);
    const concurrent = checks['retry.concurrent'];
    expect(concurrent?.verdict).toBe('fail');
    expect(concurrent?.message).toMatch(/got 409 .*duplicate_request.*met by retry\.concurrent/);
  });
});

describe('a limit signalled as 403 during repeats', () => {
  it('is blamed on the limit (spec §8), not on retry safety', async () => {
    const { limitSignalled } = await import('../check-kit/repeated-calls.ts');
    const exchange = (status: number, headers: Record<string, string>) =>
      ({ response: { status, headers } }) as unknown as Parameters<typeof limitSignalled>[0];
    expect(limitSignalled(exchange(403, { 'retry-after': '15', 'ratelimit-remaining': '0' }))).toBe(true);
    expect(limitSignalled(exchange(403, {}))).toBe(false);
    expect(limitSignalled(exchange(200, { 'ratelimit-remaining': '3' }))).toBe(false);
  });
});
