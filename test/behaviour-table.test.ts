import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClock } from '../mock-server/clock.ts';
import { createGateway, type Gateway } from '../mock-server/gateway.ts';
import { type Adapter, type CallSpec, directAdapter, mswAdapter, nodeAdapter } from './support/adapters.ts';

/**
 * One behaviour table (status and code for each kind of caller and endpoint), run through every adapter:
 * no behaviour may exist in one adapter and not the others.
 */
type Caller =
  | 'no token'
  | 'garbage token'
  | 'tampered token'
  | 'expired token'
  | 'disabled agent'
  | 'agent-none'
  | 'agent-early'
  | 'agent-verified'
  | 'agent-allowlisted';
type Endpoint = 'health' | 'whoami' | 'search' | 'fetch';
type Expected = [status: number, code?: string];

const OK: Expected = [200];
const MISSING: Expected = [401, 'missing_identity_token'];
const INVALID: Expected = [401, 'invalid_identity_token'];
const DENIED: Expected = [403, 'access_denied'];

const TABLE: Record<Caller, Record<Endpoint, Expected>> = {
  'no token': { health: OK, whoami: MISSING, search: MISSING, fetch: MISSING },
  'garbage token': { health: OK, whoami: INVALID, search: INVALID, fetch: INVALID },
  'tampered token': { health: OK, whoami: INVALID, search: INVALID, fetch: INVALID },
  'expired token': { health: OK, whoami: INVALID, search: INVALID, fetch: INVALID },
  'disabled agent': { health: OK, whoami: INVALID, search: INVALID, fetch: INVALID },
  'agent-none': { health: OK, whoami: OK, search: DENIED, fetch: DENIED },
  'agent-early': { health: OK, whoami: OK, search: DENIED, fetch: OK },
  'agent-verified': { health: OK, whoami: OK, search: OK, fetch: OK },
  'agent-allowlisted': { health: OK, whoami: OK, search: OK, fetch: OK },
};

const JSON_HEADERS = { 'content-type': 'application/json' };
const REQUESTS: Record<Endpoint, { method: string; path: string; body?: string }> = {
  health: { method: 'GET', path: '/v1/health' },
  whoami: { method: 'GET', path: '/v1/whoami' },
  search: {
    method: 'POST',
    path: '/v1/web/search',
    body: JSON.stringify({ query: 'agent tool gateway', count: 2 }),
  },
  fetch: {
    method: 'POST',
    path: '/v1/web/fetch',
    body: JSON.stringify({ url: 'https://docs.agent-gateway.example/welcome' }),
  },
};

const SEARCH_BODY = Buffer.from(JSON.stringify({ query: 'agent tool gateway', count: 2 }));
const encodedSearch = (body: Uint8Array, encoding: string): CallSpec => ({
  method: 'POST',
  path: '/v1/web/search',
  headers: { ...JSON_HEADERS, 'content-encoding': encoding },
  body,
});
/** Content-Encoding is decoded in the core's body stage: the same answers whichever adapter carries it. */
const CONTENT_ENCODING_ROWS: [string, CallSpec, number, string | undefined][] = [
  ['gzip body', encodedSearch(gzipSync(SEARCH_BODY), 'gzip'), 200, undefined],
  ['deflate body', encodedSearch(deflateSync(SEARCH_BODY), 'deflate'), 200, undefined],
  ['br body', encodedSearch(brotliCompressSync(SEARCH_BODY), 'br'), 200, undefined],
  ['body labelled gzip, sent plain', encodedSearch(SEARCH_BODY, 'gzip'), 400, 'invalid_request'],
  ['unsupported Content-Encoding', encodedSearch(SEARCH_BODY, 'compress'), 415, 'unsupported_media_type'],
  [
    'gzip bomb past the body limit once decoded',
    encodedSearch(gzipSync(`{"query":"${'x'.repeat(1_000_000)}"}`), 'gzip'),
    413,
    'payload_too_large',
  ],
];

/** Tokens for every kind of caller, minted on a virtual clock so one of them is already expired. */
function tokensFor(gateway: Gateway): Record<Caller, string | undefined> {
  const expired = gateway.mintToken('agent-verified');
  gateway.clock.advance(2 * 3600 * 1000);
  gateway.registry.update('agent-revoked', { disabled: false });
  const disabled = gateway.mintToken('agent-revoked');
  gateway.registry.update('agent-revoked', { disabled: true });
  const verified = gateway.mintToken('agent-verified');
  const flip = verified.at(10) === 'A' ? 'B' : 'A';
  return {
    'no token': undefined,
    'garbage token': 'not-a-token',
    'tampered token': `${verified.slice(0, 10)}${flip}${verified.slice(11)}`,
    'expired token': expired,
    'disabled agent': disabled,
    'agent-none': gateway.mintToken('agent-none'),
    'agent-early': gateway.mintToken('agent-early'),
    'agent-verified': verified,
    'agent-allowlisted': gateway.mintToken('agent-allowlisted'),
  };
}

const ADAPTERS: [string, (gateway: Gateway) => Adapter | Promise<Adapter>][] = [
  ['handler', directAdapter],
  ['node server (supertest)', nodeAdapter],
  ['msw (global fetch)', (gateway) => mswAdapter(gateway)],
];

describe.each(ADAPTERS)('behaviour table through the %s adapter', (_name, makeAdapter) => {
  let adapter: Adapter;
  let tokens: Record<Caller, string | undefined>;

  beforeAll(async () => {
    const gateway = createGateway({ clock: createClock() });
    tokens = tokensFor(gateway);
    adapter = await makeAdapter(gateway);
  });
  afterAll(() => adapter.close());

  const rows = Object.entries(TABLE).flatMap(([caller, row]) =>
    Object.entries(row).map(
      ([endpoint, expected]) => [caller as Caller, endpoint as Endpoint, expected] as const,
    ),
  );

  it.each(rows)('%s -> %s answers %j', async (caller, endpoint, [status, code]) => {
    const token = tokens[caller];
    const request = REQUESTS[endpoint];
    const headers: Record<string, string> = { ...(request.body ? JSON_HEADERS : {}) };
    if (token !== undefined) headers['X-Agent-Identity'] = token;
    const result = await adapter.call({ ...request, headers });
    expect(result.status).toBe(status);
    expect(result.headers['content-type']).toMatch(/^application\/json/);
    expect(result.headers['x-request-id']).toBeTruthy();
    if (status === 401) expect(result.headers['www-authenticate']).toMatch(/^AgentIdentity /);
    const body = JSON.parse(result.text);
    if (code) expect(body.code).toBe(code);
    else expect(body.code).toBeUndefined();
  });

  it.each<[string, CallSpec, number, string | undefined]>([
    ['unknown path', { method: 'GET', path: '/v1/nothing' }, 404, 'not_found'],
    ['wrong method', { method: 'DELETE', path: '/v1/whoami' }, 405, 'method_not_allowed'],
    ['wrong method on a tool', { method: 'GET', path: '/v1/web/search' }, 405, 'method_not_allowed'],
    [
      'non-JSON body',
      { method: 'POST', path: '/v1/web/search', headers: { 'content-type': 'text/plain' }, body: 'q' },
      415,
      'unsupported_media_type',
    ],
    [
      'malformed JSON',
      { method: 'POST', path: '/v1/web/search', headers: JSON_HEADERS, body: '{' },
      400,
      'invalid_request',
    ],
    [
      'bad field',
      { method: 'POST', path: '/v1/web/fetch', headers: JSON_HEADERS, body: '{"url":"ftp://x"}' },
      400,
      'invalid_request',
    ],
    [
      'oversized body',
      {
        method: 'POST',
        path: '/v1/web/search',
        headers: JSON_HEADERS,
        body: `{"query":"${'x'.repeat(70_000)}"}`,
      },
      413,
      'payload_too_large',
    ],
    ...CONTENT_ENCODING_ROWS,
  ])('%s with a valid token', async (_case, spec, status, code) => {
    const headers = { ...spec.headers, 'X-Agent-Identity': tokens['agent-verified'] as string };
    const result = await adapter.call({ ...spec, headers });
    expect(result.status).toBe(status);
    expect(JSON.parse(result.text).code).toBe(code);
    if (status === 405) expect(result.headers.allow).toMatch(/GET|POST/);
    if (status === 415 && spec.headers?.['content-encoding'])
      expect(result.headers['accept-encoding']).toBe('gzip, deflate, br');
  });

  it('the identity header name is matched case-insensitively', async () => {
    const result = await adapter.call({
      method: 'GET',
      path: '/v1/whoami',
      headers: { 'x-AGENT-identity': tokens['agent-early'] as string },
    });
    expect(result.status).toBe(200);
    expect(JSON.parse(result.text)).toMatchObject({
      agent: { id: 'agent-early' },
      tier: 'early_access',
      tools: ['web.fetch'],
    });
  });

  it('a body problem of an unauthenticated call is still 401, not 400 (identity comes first)', async () => {
    const result = await adapter.call({
      method: 'POST',
      path: '/v1/web/search',
      headers: { 'content-type': 'text/plain' },
      body: '{',
    });
    expect(result.status).toBe(401);
    expect(JSON.parse(result.text).code).toBe('missing_identity_token');
  });
});
