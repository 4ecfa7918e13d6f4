import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { observed } from '../checks/check-contract.ts';
import { commandToken, staticToken, type TokenSource } from '../tokens/token-source.ts';
import { backoffMs } from './client-pacing.ts';
import { decodeBody } from './decode-body.ts';
import { createSuiteClient } from './http-client.ts';

type Reply = { status: number; headers?: Record<string, string>; body?: unknown };
const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve)))));

/** A server on loopback with this handler, closed after the test; its base URL. */
async function listening(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A clock whose sleeps take no real time: the suite's waits are read on it (`at`). */
function virtualClock() {
  const clock = {
    at: 0,
    now: () => clock.at,
    sleep: async (ms: number) => {
      clock.at += ms;
    },
  };
  return clock;
}

/** A server answering from a script, one reply per request (the last one repeats); records arrival times. */
async function scripted(replies: Reply[]) {
  const arrivals: { at: number; token?: string }[] = [];
  const base = await listening((req, res) => {
    arrivals.push({ at: Date.now(), token: req.headers['x-agent-identity'] as string | undefined });
    const reply = replies[Math.min(arrivals.length - 1, replies.length - 1)] as Reply;
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.body ?? {}));
  });
  return { base, arrivals };
}
const VALID = { kind: 'derived', from: 'valid', transform: { op: 'none' } } as const;
const limited = (headers: Record<string, string> = {}): Reply => ({
  status: 429,
  headers,
  body: { code: 'rate_limited' },
});

describe('the suite client addresses the gateway', () => {
  it('keeps the path of the base URL: a gateway mounted under a prefix gets its requests there', async () => {
    const paths: string[] = [];
    const base = await listening((req, res) => {
      paths.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    for (const baseUrl of [`${base}/tenant-a`, `${base}/tenant-a/`]) {
      const client = createSuiteClient({ baseUrl, tokens: {}, maxWaitSeconds: 1 });
      const exchange = await client.send({ method: 'GET', path: '/v1/whoami' });
      client.close();
      expect(exchange.url).toBe(`${base}/tenant-a/v1/whoami`);
    }
    expect(paths).toEqual(['/tenant-a/v1/whoami', '/tenant-a/v1/whoami']);
  });
});

describe('token commands', () => {
  it('requests refused together all get the one fresh token (a refresh within 2 s is shared, not refused)', async () => {
    const source = commandToken('echo fresh-token', '$TOKEN');
    await source.current();
    const refreshed = await Promise.all([source.refresh(), source.refresh(), source.refresh()]);
    expect(refreshed).toEqual(['fresh-token', 'fresh-token', 'fresh-token']);
  });
});

describe('the suite client obeys the client safety rules', () => {
  it('retries a 5xx (at most three times, honouring Retry-After): a 500 as a 503 (spec §7: every 5xx is transient)', async () => {
    const unavailable: Reply = {
      status: 503,
      headers: { 'retry-after': '0' },
      body: { code: 'upstream_unavailable' },
    };
    const once = await scripted([unavailable, { status: 200 }]);
    const client = createSuiteClient({ baseUrl: once.base, tokens: {}, maxWaitSeconds: 5 });
    const healed = await client.send({ method: 'GET', path: '/v1/whoami' });
    expect([healed.response.status, healed.attempts]).toEqual([200, 2]);
    const down = await scripted([unavailable]);
    const downClient = createSuiteClient({ baseUrl: down.base, tokens: {}, maxWaitSeconds: 5 });
    const observed = await downClient.send({ method: 'GET', path: '/v1/whoami' });
    expect([observed.response.status, observed.attempts, observed.transientRetries]).toEqual([503, 4, 3]);
    expect((await downClient.send({ method: 'GET', path: '/v1/whoami' }, { raw: true })).attempts).toBe(1);
    const crash = await scripted([{ status: 500, body: { code: 'internal_error' } }, { status: 200 }]);
    const crashClient = createSuiteClient({ baseUrl: crash.base, tokens: {}, maxWaitSeconds: 5 });
    const crashed = await crashClient.send({ method: 'GET', path: '/v1/whoami' });
    expect([crashed.response.status, crashed.attempts, crashed.transientRetries]).toEqual([200, 2, 1]);
    // While a property shrinks a counterexample whose 5xx persisted, a 5xx is taken as it comes.
    const shrinking = await scripted([{ status: 500, body: { code: 'internal_error' } }, { status: 200 }]);
    const shrinkClient = createSuiteClient({ baseUrl: shrinking.base, tokens: {}, maxWaitSeconds: 5 });
    shrinkClient.retryServerErrors(false);
    const asIs = await shrinkClient.send({ method: 'GET', path: '/v1/whoami' });
    expect([asIs.response.status, asIs.attempts]).toEqual([500, 1]);
    shrinkClient.close();
    for (const c of [client, downClient, crashClient]) c.close();
  });

  it('honours Retry-After before retrying a 429', async () => {
    const { base, arrivals } = await scripted([limited({ 'retry-after': '1' }), { status: 200 }]);
    const client = createSuiteClient({ baseUrl: base, tokens: {}, maxWaitSeconds: 5 });
    const exchange = await client.send({ method: 'GET', path: '/v1/health' });
    client.close();
    expect(exchange.response.status).toBe(200);
    expect(exchange.attempts).toBe(2);
    expect((arrivals[1]?.at ?? 0) - (arrivals[0]?.at ?? 0)).toBeGreaterThanOrEqual(990);
  });

  it('backs off exponentially with jitter without Retry-After, and stops at a hard cap', async () => {
    const { base, arrivals } = await scripted([limited()]);
    const client = createSuiteClient({ baseUrl: base, tokens: {}, maxWaitSeconds: 5, maxRetries: 3 });
    const exchange = await client.send({ method: 'GET', path: '/v1/whoami' });
    client.close();
    expect(exchange.rateLimitExhausted).toBe(true);
    expect(arrivals).toHaveLength(4);
    const gaps = arrivals.slice(1).map((a, i) => a.at - (arrivals[i]?.at ?? 0));
    expect(gaps[1]).toBeGreaterThan(gaps[0] as number);
  });

  it('says when the retry cap ran out although every retry waited the Retry-After asked: not truthful', async () => {
    const { base, arrivals } = await scripted([limited({ 'retry-after': '0' })]);
    const client = createSuiteClient({ baseUrl: base, tokens: {}, maxWaitSeconds: 5, maxRetries: 2 });
    const exchange = await client.send({ method: 'GET', path: '/v1/whoami' });
    client.close();
    expect(arrivals).toHaveLength(3);
    expect(exchange.rateLimitExhausted).toBe(true);
    expect(exchange.retryAfterUntruthful).toBe(true);
    expect(() => observed(exchange)).toThrow(/Retry-After is not truthful .*will not help/);
    // Without a Retry-After the suite chose its own waits: nothing says the gateway misled it.
    const backoff = await scripted([limited()]);
    const other = createSuiteClient({ baseUrl: backoff.base, tokens: {}, maxWaitSeconds: 5, maxRetries: 1 });
    const unsaid = await other.send({ method: 'GET', path: '/v1/whoami' });
    other.close();
    expect(unsaid.rateLimitExhausted).toBe(true);
    expect(unsaid.retryAfterUntruthful).toBeUndefined();
  });

  it('keeps its own backoff floor once a Retry-After proved too short: "0" is never retried at 0 s again', async () => {
    // A virtual clock: the suite's waits take no real time, and the gaps are read on it.
    const clock = virtualClock();
    const seen: number[] = [];
    const base = await listening((_req, res) => {
      seen.push(clock.at);
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' });
      res.end('{"code":"rate_limited"}');
    });
    const client = createSuiteClient({ baseUrl: base, tokens: {}, maxWaitSeconds: 60, maxRetries: 4, clock });
    const exchange = await client.send({ method: 'GET', path: '/v1/whoami' });
    const gaps = seen.slice(1).map((at, i) => at - (seen[i] as number));
    // The first retry honours "0" (now, plus jitter); each 429 after that doubles the floor: 1, 2, 4 s
    // (a quarter of jitter on top; 50 ms of margin when the pacing gate of the scope ends later).
    expect(gaps[0]).toBeLessThanOrEqual(100);
    expect(gaps.slice(1).map((g, i) => g >= 1000 * 2 ** i && g <= 1250 * 2 ** i + 50)).toEqual([
      true,
      true,
      true,
    ]);
    expect(exchange.retryAfterUntruthful).toBe(true);
    // Later calls of the scope start from the floor reached, not from 0 s again.
    expect(client.floorOf('anonymous')).toBe(8000);
    client.close();
  });

  it('a 429 that asks for no wait is backed off with steps growing to --max-wait-seconds (a minute window is waited out)', async () => {
    const clock = virtualClock();
    const seen: number[] = [];
    const base = await listening((_req, res) => {
      seen.push(clock.at);
      // A fixed window of a minute, without Retry-After or rate-limit headers: admitted from 60 s on.
      res.writeHead(clock.at >= 60_000 ? 200 : 429, { 'content-type': 'application/json' });
      res.end(clock.at >= 60_000 ? '{}' : '{"code":"rate_limited"}');
    });
    const client = createSuiteClient({ baseUrl: base, tokens: {}, maxWaitSeconds: 60, clock });
    const exchange = await client.send({ method: 'GET', path: '/v1/whoami' });
    client.close();
    expect(exchange.response.status).toBe(200);
    expect(exchange.rateLimitExhausted).toBe(false);
    expect(seen.length).toBeLessThanOrEqual(9);
  });

  it('does not wait beyond --max-wait-seconds: the 429 is reported as exhausted at once, with the wait it asked', async () => {
    const { base, arrivals } = await scripted([limited({ 'retry-after': '3600' })]);
    const client = createSuiteClient({ baseUrl: base, tokens: {}, maxWaitSeconds: 2 });
    const exchange = await client.send({ method: 'GET', path: '/v1/whoami' });
    client.close();
    expect(exchange.rateLimitExhausted).toBe(true);
    expect(exchange.retryAfterMs).toBe(3_600_000);
    expect(arrivals).toHaveLength(1);
  });

  it('remembers which calls the gateway ever answered (not with a 429 or a 5xx), by path and credential', async () => {
    const { base } = await scripted([limited({ 'retry-after': '3600' }), { status: 401 }, { status: 200 }]);
    const client = createSuiteClient({
      baseUrl: base,
      tokens: { valid: staticToken('t', '$TOKEN') },
      maxWaitSeconds: 1,
    });
    const valid = { kind: 'derived', from: 'valid', transform: { op: 'none' } } as const;
    const limitedCall = await client.send({ method: 'GET', path: '/v1/whoami', token: valid });
    expect(client.answered(limitedCall.key)).toBe(false);
    const refused = await client.send({ method: 'GET', path: '/v1/whoami' });
    expect([refused.credential, client.answered(refused.key), client.answered(limitedCall.key)]).toEqual([
      'none',
      true,
      false,
    ]);
    const served = await client.send({ method: 'GET', path: '/v1/whoami', token: valid });
    expect([served.key, client.answered(limitedCall.key)]).toEqual([limitedCall.key, true]);
    client.close();
  });

  it('returns 429 untouched in raw mode', async () => {
    const raw = await scripted([limited({ 'retry-after': '1' }), { status: 200 }]);
    const rawClient = createSuiteClient({ baseUrl: raw.base, tokens: {}, maxWaitSeconds: 5 });
    expect((await rawClient.send({ method: 'GET', path: '/' }, { raw: true })).response.status).toBe(429);
    rawClient.close();
  });

  it('observe429 returns a 429 as it is, but still retries a transient 503 first', async () => {
    const { base, arrivals } = await scripted([
      { status: 503, headers: { 'retry-after': '0' }, body: { code: 'upstream_unavailable' } },
      limited({ 'retry-after': '1' }),
      { status: 200 },
    ]);
    const client = createSuiteClient({ baseUrl: base, tokens: {}, maxWaitSeconds: 5 });
    const exchange = await client.send({ method: 'GET', path: '/v1/whoami' }, { observe429: true });
    client.close();
    expect([exchange.response.status, exchange.transientRetries, arrivals.length]).toEqual([429, 1, 2]);
  });

  it('refreshes a command token once when the gateway stops accepting it', async () => {
    const { base, arrivals } = await scripted([
      { status: 401, body: { code: 'invalid_identity_token' } },
      { status: 200 },
    ]);
    let issued = 0;
    const source: TokenSource = {
      variable: '$TOKEN',
      current: async () => `tok-${issued}`,
      refresh: async () => `tok-${++issued}`,
    };
    const client = createSuiteClient({ baseUrl: base, tokens: { valid: source }, maxWaitSeconds: 1 });
    const exchange = await client.send({
      method: 'GET',
      path: '/v1/whoami',
      token: { kind: 'derived', from: 'valid', transform: { op: 'none' } },
    });
    client.close();
    expect(exchange.response.status).toBe(200);
    expect(arrivals.map((a) => a.token)).toEqual(['tok-0', 'tok-1']);
  });

  it('resends (twice at most) a fixed token the gateway accepted before and now refuses; the ledger keeps every answer', async () => {
    const refused: Reply = { status: 401, body: { code: 'invalid_identity_token' } };
    const { base, arrivals } = await scripted([{ status: 200 }, refused, { status: 200 }, refused, refused]);
    const client = createSuiteClient({
      baseUrl: base,
      tokens: { valid: staticToken('tok', '$TOKEN') },
      maxWaitSeconds: 5,
    });
    const whoami = { method: 'GET', path: '/v1/whoami', token: VALID } as const;
    expect((await client.send(whoami)).response.status).toBe(200);
    const again = await client.send(whoami);
    expect([again.response.status, again.attempts]).toEqual([200, 2]);
    expect(client.ledger.contradiction()?.refused.answerNo).toBe(2);
    // Refused on the resends too (expired, say): the refusal is the answer, after two resends at most.
    const expired = await client.send(whoami);
    expect([expired.response.status, expired.attempts, arrivals.length]).toEqual([401, 3, 6]);
    client.close();
  });

  it('reports a refused connection as status 0, not as an exception', async () => {
    const client = createSuiteClient({
      baseUrl: 'http://127.0.0.1:9',
      tokens: { valid: staticToken('t', '$TOKEN') },
      maxWaitSeconds: 1,
    });
    const exchange = await client.send({ method: 'GET', path: '/v1/health' });
    client.close();
    expect(exchange.response).toMatchObject({ status: 0, error: 'ECONNREFUSED' });
  });

  it('backoff grows with the attempt and stays within its jitter band', () => {
    expect(backoffMs(1, () => 0)).toBe(250);
    expect(backoffMs(1, () => 1)).toBe(500);
    expect(backoffMs(3, () => 0)).toBe(1000);
    expect(backoffMs(10, () => 1)).toBe(8000);
  });
});

describe('response bodies with a Content-Encoding', () => {
  it('are decoded (gzip, deflate, br, stacked), or labelled when they cannot be, never mojibake', () => {
    const text = '{"code":"rate_limited","message":"slow down é"}';
    expect(decodeBody(gzipSync(text), 'gzip')).toBe(text);
    expect(decodeBody(deflateSync(text), 'deflate')).toBe(text);
    expect(decodeBody(brotliCompressSync(text), 'br')).toBe(text);
    expect(decodeBody(gzipSync(deflateSync(text)), 'deflate, gzip')).toBe(text);
    expect(decodeBody(Buffer.from(text), undefined)).toBe(text);
    expect(decodeBody(Buffer.from('not gzip'), 'gzip')).toMatch(
      /^<8 bytes with Content-Encoding: gzip that do not decode/,
    );
    expect(decodeBody(Buffer.from('zzz'), 'zstd')).toBe('<3 bytes with Content-Encoding: zstd, not decoded>');
  });
});
