import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createGateway } from '../mock-server/gateway.ts';
import { scenarioFromRecording } from '../mock-server/scenarios/replay-convert.ts';
import { readRecording } from '../mock-server/scenarios/replay-recording.ts';
import { parseScenario } from '../mock-server/scenarios/scenarios.ts';
import { call, search } from './support/call.ts';

/*
 * Issue 36, recordings from other tools (red team): HARs as browsers and proxies write them, with what the
 * first converter got wrong: two agents told apart only by their tokens, requests by another method to an
 * endpoint's path, interim (1xx) answers, header values no HTTP/1.1 answer can carry.
 */

const START = Date.parse('2026-03-01T10:00:00Z');
const TOKEN_A = 'agt1.eyJzdWIiOiJhIn0.Aa7kQ2pL9mN4vB8cR1tZ5wE3aF6gH0jKXy7kQ2pL9mN';
const TOKEN_B = 'agt1.eyJzdWIiOiJiIn0.Bb7kQ2pL9mN4vB8cR1tZ5wE3aF6gH0jKXy7kQ2pL9mN';

interface Entry {
  ms: number;
  token?: string;
  method?: string;
  status?: number;
  headers?: Record<string, string>;
  body?: string;
}

/** A HAR entry as Chrome's "Save all as HAR" writes it (no `_agent`; `_initiator`, timings, size -1). */
const chromeEntry = ({
  ms,
  token = TOKEN_A,
  method = 'POST',
  status = 200,
  headers = {},
  body = '{}',
}: Entry) => ({
  startedDateTime: new Date(START + ms).toISOString(),
  time: 4.2,
  request: {
    method,
    url: 'https://gw.example/api/v1/web/search',
    headers: [{ name: 'x-agent-identity', value: token }],
  },
  response: {
    status,
    headers: Object.entries({ 'content-type': 'application/json', ...headers }).map(([name, value]) => ({
      name,
      value,
    })),
    content: { size: -1, mimeType: 'application/json', text: body },
  },
  timings: { blocked: 0.3, dns: -1, ssl: -1, connect: -1, send: 0.1, wait: 3.5, receive: 0.3 },
  serverIPAddress: '93.184.216.34',
  _initiator: { type: 'script' },
  _resourceType: 'fetch',
});

const convert = (entries: Entry[], agentMap?: Record<string, string>) => {
  const text = JSON.stringify({ log: { version: '1.2', entries: entries.map(chromeEntry) } });
  return scenarioFromRecording(readRecording(text, 'chrome.har'), { source: 'chrome.har', agentMap });
};

const body = (n: string) => JSON.stringify({ query: n, results: [] });

describe('recordings from other tools', () => {
  it('tells apart agents a HAR names only by their tokens, and replays each its own answers', async () => {
    // A's third search is refused; B's are all answered, interleaved with A's.
    const { scenario, warnings, yaml } = convert(
      [
        { ms: 0, body: body('a1') },
        { ms: 10, token: TOKEN_B, body: body('b1') },
        { ms: 20, body: body('a2') },
        { ms: 30, token: TOKEN_B, body: body('b2') },
        { ms: 40, status: 429, headers: { 'retry-after': '9' }, body: '{"code":"rate_limited"}' },
      ],
      { 'agent-verified': 'recorded-agent-1', 'agent-allowlisted': 'recorded-agent-2' },
    );
    const agents = scenario.replay?.agents ?? {};
    expect(Object.keys(agents)).toEqual(['recorded-agent-1', 'recorded-agent-2']);
    expect(agents['recorded-agent-1']?.map((a) => a.status)).toEqual([200, 200, 429]);
    expect(agents['recorded-agent-2']?.map((a) => (a.json as { query: string }).query)).toEqual(['b1', 'b2']);
    expect(warnings.join('\n')).toMatch(
      /2 agents told apart by their tokens: recorded-agent-1 \(tok_[0-9a-f]{8}\)/,
    );
    expect(yaml).not.toContain(TOKEN_A);
    expect(yaml).not.toContain(TOKEN_B);
    const gateway = createGateway();
    gateway.useScenario(scenario);
    const a = gateway.mintToken('agent-verified');
    const b = gateway.mintToken('agent-allowlisted');
    expect((await search(gateway, a, 'x')).body).toMatchObject({ query: 'a1' });
    expect((await search(gateway, b, 'x')).body).toMatchObject({ query: 'b1' });
    expect((await search(gateway, b, 'x')).body).toMatchObject({ query: 'b2' });
    expect((await search(gateway, a, 'x')).body).toMatchObject({ query: 'a2' });
    const refused = await search(gateway, a, 'x');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('9');
  });

  it('keeps one token as the one recorded agent, as before', () => {
    const { scenario } = convert([{ ms: 0 }, { ms: 5 }]);
    expect(Object.keys(scenario.replay?.agents ?? {})).toEqual(['recorded-agent']);
  });

  it("leaves out requests by another method than the endpoint's (a CORS preflight, a GET answered 405)", async () => {
    const { scenario, warnings } = convert([
      { ms: 0, method: 'OPTIONS', status: 204, body: '' },
      {
        ms: 5,
        method: 'GET',
        status: 405,
        headers: { allow: 'POST' },
        body: '{"code":"method_not_allowed"}',
      },
      { ms: 10, body: body('first') },
    ]);
    expect(scenario.replay?.agents['recorded-agent']?.map((a) => a.status)).toEqual([200]);
    expect(warnings).toContain(
      'left out 2 exchange(s): web.search by another method than POST (not replayed)',
    );
    const gateway = createGateway();
    gateway.useScenario(scenario);
    expect((await search(gateway, gateway.mintToken('agent-verified'), 'x')).body).toMatchObject({
      query: 'first',
    });
  });

  it('leaves out interim (1xx) answers, which are not what the agent was finally answered', () => {
    const { scenario, warnings } = convert([
      { ms: 0, status: 103, headers: { link: '</x>; rel=preload' } },
      { ms: 1, body: body('final') },
    ]);
    expect(scenario.replay?.agents['recorded-agent']?.map((a) => a.status)).toEqual([200]);
    expect(warnings.join('\n')).toMatch(/web\.search answered 103/);
    // A scenario written by hand with one is refused when loaded, not dropped at the agent.
    const hand = parse(
      `name: x\ndescription: x\nreplay:\n  recorded_at: 2026-03-01T10:00:00Z\n  agents:\n    a:\n      - { operation: whoami, at_ms: 0, status: 101 }\n`,
    );
    expect(() => parseScenario(hand, 'hand.yaml')).toThrow(/replay\.agents\.a\[0\]\.status/);
  });

  it('drops header values no HTTP/1.1 answer can carry (a 500 when served), and says so', async () => {
    const { scenario, warnings } = convert([
      {
        ms: 0,
        headers: { 'x-note': 'limite \u2014 d\u00e9pass\u00e9', 'x-ok': 'caf\u00e9' },
        body: body('q'),
      },
    ]);
    const headers = scenario.replay?.agents['recorded-agent']?.[0]?.headers;
    expect(headers?.['x-note']).toBeUndefined();
    expect(headers?.['x-ok']).toBe('caf\u00e9');
    expect(warnings.join('\n')).toMatch(/header x-note .*entry 1/);
    const hand = parse(
      `name: x\ndescription: x\nreplay:\n  recorded_at: 2026-03-01T10:00:00Z\n  agents:\n    a:\n      - { operation: whoami, at_ms: 0, status: 200, headers: { x-note: "a\u2014b" } }\n`,
    );
    expect(() => parseScenario(hand, 'hand.yaml')).toThrow(
      /replay\.agents\.a\[0\]\.headers\["x-note"\]: must hold no line break/,
    );
    const gateway = createGateway();
    gateway.useScenario(scenario);
    const served = await call(gateway, 'POST', '/v1/web/search', {
      token: gateway.mintToken('agent-verified'),
      body: { query: 'q' },
    });
    expect(served.status).toBe(200);
  });

  /**
   * A 429 with these headers and JSON body, then a 502 with a text body, converted: the two answers replayed,
   * once the scenario's YAML is seen to hold none of the secrets.
   */
  function redacted(headers: Record<string, string>, json: unknown, text: string, secrets: string[]) {
    const { yaml, scenario } = convert([
      { ms: 0, status: 429, headers, body: JSON.stringify(json) },
      { ms: 1, status: 502, headers: { 'content-type': 'text/plain' }, body: text },
    ]);
    for (const secret of secrets) expect(yaml).not.toContain(secret);
    const [refused, page] = scenario.replay?.agents['recorded-agent'] ?? [];
    return { refused, page };
  }

  it('redacts opaque credentials no secret pattern knows, by the name they go by (header, parameter, JSON field)', () => {
    const { refused, page } = redacted(
      {
        'x-auth-token': 'f3a9c1d2e4b5a6c7d8e9',
        'x-amz-security-token': 'FwoGZXIvYXdzEJrOpaque0',
        'x-csrf-token': 'csrfopaque123456789',
        link: '<https://gw.example/retry?access_token=opaque9f8e7d6c5b4a&sig=abcdef0123456789&page=2>; rel=next',
        'retry-after': '3',
        'ratelimit-policy': '"q";q=3;w=60',
      },
      {
        code: 'rate_limited',
        sessionToken: 'sessopaque0123456789',
        session_id: 'sid0123456789abcdef',
        reason: 'expired',
        retry_url: 'https://gw.example/v1/web/search?key=opaqueKEY0123456789&q=x',
      },
      'error: access_token=opaque9f8e7d6c5b4a&client_secret=cs0123456789abcdef',
      [
        'f3a9c1d2',
        'FwoGZX',
        'csrfopaque',
        'opaque9f8e',
        'abcdef0123',
        'sessopaque',
        'sid0123',
        'opaqueKEY',
        'cs0123',
      ],
    );
    // What a replay needs stays: the limit's headers, the parameters and fields that are no credential.
    expect(refused?.headers).toMatchObject({ 'retry-after': '3', 'ratelimit-policy': '"q";q=3;w=60' });
    expect(refused?.headers?.link).toBe(
      '<https://gw.example/retry?access_token=[REDACTED]&sig=[REDACTED]&page=2>; rel=next',
    );
    expect(refused?.json).toMatchObject({
      code: 'rate_limited',
      reason: 'expired',
      retry_url: 'https://gw.example/v1/web/search?key=[REDACTED]&q=x',
    });
    expect(page?.body).toBe('error: access_token=[REDACTED]&client_secret=[REDACTED]');
  });

  it("redacts by the journal's own rule (credential-redaction.ts): nested fields, a scheme kept, pairs in prose", () => {
    const { refused, page } = redacted(
      {
        'x-session-token': 'Bearer opaqueBearer0123456789',
        warning: '199 - "retry with password: hunter2pass"',
        'retry-after': '2',
      },
      {
        code: 'rate_limited',
        credentials: { value: 'opaqueNested0123456789', pin: 48213377 },
        tokens: ['opaqueListed0123456789'],
        help: 'see https://user:opaquePass0123@gw.example/help',
      },
      'upstream said: "api_key": "opaqueQuoted0123456789"; Authorization: Bearer opaqueProse0123456789',
      [
        'opaqueBearer',
        'hunter2pass',
        'opaqueNested',
        '48213377',
        'opaqueListed',
        'opaquePass',
        'opaqueQuoted',
        'opaqueProse',
      ],
    );
    // The scheme of a credential header is no secret, and what is not a credential stays.
    expect(refused?.headers).toMatchObject({ 'x-session-token': 'Bearer [REDACTED]', 'retry-after': '2' });
    expect(refused?.json).toEqual({
      code: 'rate_limited',
      credentials: { value: '[REDACTED]', pin: '[REDACTED]' },
      tokens: ['[REDACTED]'],
      help: 'see https://user:[REDACTED]@gw.example/help',
    });
    expect(page?.body).toBe('upstream said: "api_key": "[REDACTED]"; Authorization: Bearer [REDACTED]');
  });

  it('decodes a body a tool saved still compressed (base64 of gzip, deflate or br), instead of replaying [binary]', () => {
    const text = body('zipped');
    const entries = [
      ['gzip', gzipSync(text)],
      ['deflate', deflateSync(text)],
      ['br', brotliCompressSync(text)],
    ].map(([encoding, bytes], i) => {
      const e = chromeEntry({ ms: i, headers: { 'content-encoding': encoding as string } });
      return {
        ...e,
        response: {
          ...e.response,
          content: { size: -1, text: (bytes as Buffer).toString('base64'), encoding: 'base64' },
        },
      };
    });
    // As browsers save it: decoded, base64, the Content-Encoding header as it came.
    const decoded = chromeEntry({ ms: 9, headers: { 'content-encoding': 'br' } });
    entries.push({
      ...decoded,
      response: {
        ...decoded.response,
        content: {
          size: -1,
          text: Buffer.from(body('already decoded')).toString('base64'),
          encoding: 'base64',
        },
      },
    });
    const source = JSON.stringify({ log: { version: '1.2', entries } });
    const { scenario } = scenarioFromRecording(readRecording(source, 'charles.har'), {
      source: 'charles.har',
    });
    expect(scenario.replay?.agents['recorded-agent']?.map((a) => a.json)).toEqual([
      { query: 'zipped', results: [] },
      { query: 'zipped', results: [] },
      { query: 'zipped', results: [] },
      { query: 'already decoded', results: [] },
    ]);
  });

  it('names the answer whose body makes a scenario too large, not only the journal slice advice', () => {
    // Each under the 256 KiB a scenario keeps of one body; together over the 1 MiB of a scenario file.
    const large = (n: number) =>
      JSON.stringify({ results: Array.from({ length: n }, (_, i) => ({ t: 'x'.repeat(60), i })) });
    expect(() =>
      convert([
        { ms: 0, body: body('small') },
        { ms: 5, body: large(3_000) },
        { ms: 6, body: large(3_600) },
        { ms: 7, body: large(3_000) },
        { ms: 8, body: large(3_000) },
        { ms: 9, body: large(3_000) },
      ]),
    ).toThrow(/over the 1048576 a scenario file may hold; the largest answer body is entry 3's \(\d+ bytes/);
  });

  it("reads Playwright's recordHar: null fields, and says when bodies were attached beside the HAR (content: 'attach')", () => {
    const entries = [0, 1].map((ms) => {
      const e = chromeEntry({ ms, body: body('pw') });
      const content =
        ms === 0
          ? { size: -1, mimeType: 'application/json', text: body('pw'), encoding: null }
          : { size: 77, mimeType: 'application/json', _file: '75841f6.json', _sha1: '75841f6' };
      return {
        ...e,
        _monotonicTime: 1234.5 + ms,
        _frameref: 'frame@1',
        response: { ...e.response, content },
      };
    });
    const source = JSON.stringify({ log: { version: '1.2', pages: [], entries } });
    const { scenario, warnings } = scenarioFromRecording(readRecording(source, 'pw.har'), {
      source: 'pw.har',
    });
    expect(scenario.replay?.agents['recorded-agent']?.[0]?.json).toEqual({ query: 'pw', results: [] });
    expect(warnings.join('\n')).toMatch(
      /1 answer body\(ies\) are in files beside the HAR \(_file\), e\.g\. entry 2/,
    );
  });
});
