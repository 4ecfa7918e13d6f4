import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runConformance } from '../../run/runner.ts';

type Reply = { status: number; headers?: Record<string, string>; body?: unknown };
const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve)))));

/** A gateway answering each path from its own script (the last reply repeats). */
async function scripted(routes: Record<string, Reply[]>) {
  const seen: Record<string, number> = {};
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const replies = routes[path] ?? [{ status: 200, body: { ok: true } }];
    seen[path] = (seen[path] ?? 0) + 1;
    const reply = replies[Math.min(seen[path] - 1, replies.length - 1)] as Reply;
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.body ?? {}));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const limited = (retryAfter: string): Reply => ({
  status: 429,
  headers: { 'retry-after': retryAfter },
  body: { code: 'rate_limited' },
});
const ok: Reply = { status: 200, body: { agent: 'a' } };

/**
 * Runs only authz.allowed-calls-served on a virtual clock: nothing really waits, and the time budget
 * and deadlines are measured on that clock alone, so a slow (loaded) machine sees the same run.
 */
async function run(baseUrl: string, options: { allowedTools?: ('web.search' | 'web.fetch')[] } = {}) {
  const sleeps: number[] = [];
  const log: string[] = [];
  let now = 1_700_000_000_000;
  const report = await runConformance({
    baseUrl,
    token: 'valid-token-valid-token',
    only: ['authz.allowed-calls-served'],
    seed: 1,
    clock: {
      now: () => now,
      sleep: async (ms) => {
        sleeps.push(ms);
        now += ms;
      },
    },
    log: (line) => log.push(line),
    ...options,
  });
  return { result: report.checks[0], sleeps, log, report };
}

describe('authz.allowed-calls-served', () => {
  it('waits out a Retry-After beyond --max-wait-seconds once (a quota used up before the run), with progress, then passes', async () => {
    // The pre-flight whoami and the check's first call meet the used-up quota; the call after the wait is served.
    const { baseUrl } = await scripted({ '/v1/whoami': [limited('90'), limited('90'), ok] });
    const { result, sleeps, log } = await run(baseUrl);
    expect(result?.verdict).toBe('pass');
    expect(sleeps.reduce((a, b) => a + b, 0)).toBe(90_100);
    expect(log.some((line) => /waiting 91 s once before judging it never served/.test(line))).toBe(true);
    expect(log.filter((line) => /still waiting/.test(line))).toHaveLength(6);
  });

  it('a gateway that serves nothing fails it, not-served, without waiting an hour', async () => {
    const { baseUrl } = await scripted({ '/v1/whoami': [limited('3600')] });
    const { result, sleeps, report } = await run(baseUrl);
    expect(result).toMatchObject({ verdict: 'fail', unobserved: 'not-served' });
    expect(result?.message).toMatch(
      /^Expected 2xx for GET \/v1\/whoami with the valid token .*got only 429 \(Retry-After 3600 s\)/,
    );
    expect(sleeps).toEqual([]);
    expect(report.summary).toMatchObject({ mustFailed: 1, notServed: 1 });
  });

  it('a tool refused to the valid token fails, and says how to narrow the token; narrowed, the tool is skipped, not passed', async () => {
    const refused = { status: 403, body: { code: 'access_denied' } };
    const { baseUrl, seen } = await scripted({ '/v1/whoami': [ok], '/v1/web/search': [refused] });
    const { result } = await run(baseUrl);
    expect(result?.verdict).toBe('fail');
    expect(result?.message).toMatch(
      /POST \/v1\/web\/search .*got 403 .*access_denied.*--allowed-tools web\.fetch/,
    );
    const searches = seen['/v1/web/search'];
    const narrowed = await run(baseUrl, { allowedTools: ['web.fetch'] });
    expect(narrowed.result?.verdict).toBe('pass');
    expect(narrowed.result?.message).toMatch(
      /web\.search skipped, not checked: outside --allowed-tools web\.fetch/,
    );
    expect(seen['/v1/web/search']).toBe(searches);
  });

  it('a 5xx that persists through the retries is reported as a server error, not as an authorization problem', async () => {
    const { baseUrl } = await scripted({
      '/v1/whoami': [ok],
      '/v1/web/fetch': [{ status: 500, body: { code: 'internal_error' } }],
    });
    const { result } = await run(baseUrl);
    expect(result?.verdict).toBe('fail');
    expect(result?.message).toMatch(
      /got 500 .*: a server error \(possibly transient, still so after 3 retries\)\. Fix: the gateway failed on its side/,
    );
  });
});
