import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, spawnServe } from '../dev/spawn-serve.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { captureBody } from '../mock-server/journal/exchange-capture.ts';
import { createSecretScanner } from '../mock-server/secrets/secrets.ts';
import { IDENTITY_HEADER_KEY } from '../vocabulary/identity-header.ts';
import { runCli } from './support/cli.ts';

/*
 * One redaction for every text kept, held by a corpus of planted secrets. A real loopback target that
 * answers the way careless gateways do (validation errors echoing the request's body, multipart echoed as
 * text, debug headers, secrets in error codes and Retry-After), the real `agent-gateway proxy` process in
 * front of it, and every output: the journal, its NDJSON export, the HAR export, the findings, the client
 * report, the proxy's log, and the scenario `scenario from-har` makes of the proxy's HAR and of third-party
 * HARs of the target's raw answers (plain, base64, gzip). No planted secret may survive in any of them;
 * the proxy's admin key, sent in a dozen spellings, never reaches the target either.
 */

const ADMIN = 'Corpus!Admin~Key#5e1d';
const TOKEN = 'corpus-token-not-a-gateway-token-4d2f';

/** Every character percent-encoded (`%43%6F...`), as a client may send any of them. */
const percentAll = (text: string) =>
  [...Buffer.from(text)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
const b64 = (text: string) => Buffer.from(text).toString('base64');
const b64url = (text: string) => Buffer.from(text).toString('base64url');

/** A JWT whose header is spelled with a space (`{ "alg"`: it starts `eyAi`, not `eyJ`). */
const JWT = [
  b64url('{ "alg": "HS256", "typ": "JWT" }'),
  b64url('{ "sub": "c0rpus-jwt-subject-61", "exp": 1900000000 }'),
  'k9Qw3Zx7Lm2Np8Rt5Vy1Bc4Df6Gh0Jk2Mn4Pq6St8Uv',
].join('.');

/** Secrets planted where the audit found them survive, and more: each must appear in no output. */
const PLANTED = {
  echoedNumber: '918273645501',
  echoedPin: '73519',
  echoedArray: 'c0rpus-array-tok-11',
  echoedObject: 'c0rpus-object-cred-12',
  pw: 'c0rpus-pw-13',
  resetToken: 'c0rpus-reset-14',
  primaryKey: 'c0rpus-primary-15',
  secondaryKey: 'c0rpus-secondary-16',
  multipartPassword: 'c0rpus-multipart-pass-17',
  multipartToken: 'c0rpus-multipart-tok-18',
  doubleEncodedNext: 'c0rpus-dbl-next-19',
  doubleEncodedName: 'c0rpus-dbl-name-20',
  curlPassword: 'c0rpus-curl-pass-21',
  curlAnswer: 'c0rpus-curl-answer-22',
  jwtSignature: JWT.split('.')[2] as string,
  jwtPayload: JWT.split('.')[1] as string,
  debugHeaderJson: '660044228811',
  codeSecret: 'c0rpus-code-23',
  retryAfterSecret: 'c0rpus-retry-24X',
  requestIdSecret: 'c0rpus-reqid-25',
  proseJson: 'c0rpus-prose-26',
  escapedInProse: 'c0rpus-escaped-27',
  formInJson: 'c0rpus-form-in-json-28',
};

/** What the target answers; `raw` keeps every answer as sent (for the third-party HARs). */
interface RawAnswer {
  method: string;
  path: string;
  requestHeaders: { name: string; value: string }[];
  status: number;
  headers: [string, string][];
  body: string;
}

function answerOf(req: IncomingMessage, body: string): Omit<RawAnswer, 'method' | 'path' | 'requestHeaders'> {
  const path = (req.url ?? '').split('?')[0];
  if (req.headers['x-corpus-answer'] === 'slow')
    return {
      status: 429,
      headers: [
        ['content-type', 'application/json'],
        ['retry-after', `Bearer ${PLANTED.retryAfterSecret}`],
        ['x-request-id', `reset_token=${PLANTED.requestIdSecret}`],
      ],
      body: JSON.stringify({ code: `slow_down pw=${PLANTED.codeSecret}`, message: 'later' }),
    };
  if (path === '/v1/whoami')
    return {
      status: 200,
      headers: [
        ['content-type', 'application/json'],
        ['x-debug', `{"password": ${PLANTED.debugHeaderJson}}`],
      ],
      body: JSON.stringify({
        id: 'corpus-agent',
        tier: 'verified',
        hint: `reproduce with: curl -u admin:${PLANTED.curlAnswer} https://gw.example/v1/whoami`,
        detail: `Invalid body {"client_secret": "${PLANTED.proseJson}", "n": 1}`,
        note: `log line: {\\"api_key\\": \\"${PLANTED.escapedInProse}\\"}`,
        form: `grant_type=password&pw=${PLANTED.formInJson}`,
      }),
    };
  if (path === '/v1/web/search')
    // A validation error echoing the request's body, as many gateways do.
    return {
      status: 400,
      headers: [['content-type', 'application/json']],
      body: JSON.stringify({ code: 'invalid_request', message: 'query is required', received: body }),
    };
  if (path === '/v1/web/fetch')
    // A multipart body echoed as text.
    return {
      status: 200,
      headers: [['content-type', 'application/json']],
      body: JSON.stringify({ url: 'https://x.example', content: `You sent:\r\n${body}` }),
    };
  return { status: 404, headers: [['content-type', 'application/json']], body: '{"code":"not_found"}' };
}

describe('planted secrets through every output of the proxy and the converter', () => {
  const raw: RawAnswer[] = [];
  const received: string[] = [];
  const target = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      received.push(JSON.stringify({ url: req.url, headers: req.rawHeaders, body }));
      const answer = answerOf(req, body);
      const requestHeaders: { name: string; value: string }[] = [];
      for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
        requestHeaders.push({ name: req.rawHeaders[i] as string, value: req.rawHeaders[i + 1] as string });
      raw.push({ method: req.method ?? 'GET', path: req.url ?? '/', requestHeaders, ...answer });
      res.writeHead(answer.status, answer.headers.flat());
      res.end(answer.body);
    });
  });
  let proxy: ServeProcess;
  let dir = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'redaction-corpus-'));
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const { port } = target.address() as { port: number };
    proxy = await spawnServe(['--target', `http://127.0.0.1:${port}`, '--journal-body-bytes', '65536'], {
      command: 'proxy',
      env: { AGENT_GATEWAY_ADMIN_KEY: ADMIN },
    });
  }, 60_000);

  afterAll(async () => {
    await proxy?.stop();
    target.closeAllConnections();
    await new Promise<void>((resolve) => target.close(() => resolve()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** One request sent as given (no URL normalisation, any header name), with its status. */
  const send = (method: string, path: string, headers: Record<string, string>, body?: string | Buffer) =>
    new Promise<number>((resolve, reject) => {
      const { port } = new URL(proxy.url);
      const req = request({ host: '127.0.0.1', port: Number(port), method, path, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });
  const id = { [IDENTITY_HEADER_KEY]: TOKEN };

  // The admin key in every spelling the audit tried, and more: never forwarded, never kept.
  const ADMIN_HEADERS: Record<string, string>[] = [
    { authorization: `Basic ${b64(`admin:${ADMIN}`)}` },
    { authorization: `Basic ${b64(`${ADMIN}:`)}` },
    { 'x-info': b64(ADMIN) },
    { 'x-info': b64url(ADMIN) },
    { 'x-info': percentAll(ADMIN) },
    { 'x-info': percentAll(percentAll(ADMIN)) },
    { 'x-info': Buffer.from(ADMIN).toString('hex') },
    { 'x-info': ADMIN.toUpperCase() },
    { cookie: `c=${b64url(ADMIN)}` },
    { [`x-${ADMIN}`]: '1' },
    { [`x.${b64url(ADMIN)}`]: '1' },
  ];
  const ADMIN_QUERIES = [
    `?k=${encodeURIComponent(ADMIN)}`,
    `?k=${encodeURIComponent(b64(ADMIN))}`,
    `?k=${b64url(ADMIN)}`,
    `?k=${percentAll(percentAll(ADMIN))}`,
    `?${encodeURIComponent(ADMIN)}=1`,
    `?${b64url(ADMIN)}=1`,
    `?auth=${encodeURIComponent(`Basic ${b64(`u:${ADMIN}`)}`)}`,
  ];
  /** Every spelling of the admin key the corpus sends (as the target would see it). */
  const adminSpellings = [
    ADMIN,
    ADMIN.toLowerCase(),
    encodeURIComponent(ADMIN),
    b64(ADMIN),
    b64url(ADMIN),
    percentAll(ADMIN),
    Buffer.from(ADMIN).toString('hex'),
    b64(`admin:${ADMIN}`),
    b64(`${ADMIN}:`),
    b64(`u:${ADMIN}`),
  ];

  const plantAll = async () => {
    expect(await send('GET', '/v1/whoami', { ...id, 'x-trace': `token ${JWT}` })).toBe(200);
    const search = JSON.stringify({
      query: 'weather',
      password: Number(PLANTED.echoedNumber),
      pin: Number(PLANTED.echoedPin),
      tokens: [PLANTED.echoedArray],
      credentials: { user: 'u', value: PLANTED.echoedObject },
      pw: PLANTED.pw,
      reset_token: PLANTED.resetToken,
      primaryKey: PLANTED.primaryKey,
      secondary_key: PLANTED.secondaryKey,
    });
    const next = encodeURIComponent(
      encodeURIComponent(`https://x.example/cb?access_token=${PLANTED.doubleEncodedNext}`),
    );
    expect(
      await send(
        'POST',
        `/v1/web/search?next=${next}&api%255Fkey=${PLANTED.doubleEncodedName}`,
        {
          ...id,
          'content-type': 'application/json',
          'x-note': `curl -u admin:${PLANTED.curlPassword} https://x`,
        },
        search,
      ),
    ).toBe(400);
    const boundary = 'CorpusBoundary7';
    const multipart =
      `--${boundary}\r\nContent-Disposition: form-data; name="url"\r\n\r\nhttps://x.example\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="password"\r\n\r\n${PLANTED.multipartPassword}\r\n` +
      `--${boundary}\r\nContent-Type: text/plain\r\nContent-Disposition: form-data; name="user[access_token]"\r\n\r\n${PLANTED.multipartToken}\r\n` +
      `--${boundary}--\r\n`;
    expect(
      await send(
        'POST',
        '/v1/web/fetch',
        { ...id, 'content-type': `multipart/form-data; boundary=${boundary}` },
        multipart,
      ),
    ).toBe(200);
    const slow = { ...id, 'content-type': 'application/json', 'x-corpus-answer': 'slow' };
    expect(await send('POST', '/v1/web/search', slow, '{"query":"weather"}')).toBe(429);
    for (const headers of ADMIN_HEADERS) await send('GET', '/v1/whoami', { ...id, ...headers });
    for (const query of ADMIN_QUERIES) expect(await send('GET', `/v1/whoami${query}`, id), query).toBe(400);
  };

  const outputsOfProxy = async () => {
    const admin = { 'x-admin-key': ADMIN };
    const get = async (path: string) => {
      const res = await fetch(`${proxy.url}${path}`, { headers: admin });
      expect(res.status, path).toBe(200);
      return res.text();
    };
    const har = await get('/__admin/export?format=har');
    writeFileSync(join(dir, 'proxy.har'), har);
    const converted = await runCli(['scenario', 'from-har', join(dir, 'proxy.har')]);
    expect(converted.code, converted.stderr).toBe(0);
    return {
      journal: await get('/__admin/journal'),
      ndjson: await get('/__admin/journal/export'),
      har,
      findings: await get('/__admin/findings'),
      report: await get('/__admin/report?agent=corpus-agent'),
      log: proxy.output(),
      'converted proxy HAR': converted.stdout + converted.stderr,
    };
  };

  /** Third-party HARs of the target's raw answers: the body as text, as base64, and gzipped as base64. */
  const thirdPartyHars = () => {
    const entry = (a: RawAnswer, i: number, shape: 'text' | 'base64' | 'gzip') => {
      const content =
        shape === 'text'
          ? { size: Buffer.byteLength(a.body), mimeType: 'application/json', text: a.body }
          : {
              size: Buffer.byteLength(a.body),
              mimeType: 'application/json',
              encoding: 'base64',
              text: (shape === 'gzip' ? gzipSync(a.body) : Buffer.from(a.body)).toString('base64'),
            };
      const headers = a.headers.map(([name, value]) => ({ name, value }));
      if (shape === 'gzip') headers.push({ name: 'content-encoding', value: 'gzip' });
      return {
        startedDateTime: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        request: { method: a.method, url: `https://gw.example${a.path}`, headers: a.requestHeaders },
        response: { status: a.status, headers, content },
      };
    };
    return (['text', 'base64', 'gzip'] as const).map((shape) => ({
      shape,
      har: JSON.stringify({ log: { version: '1.2', entries: raw.map((a, i) => entry(a, i, shape)) } }),
    }));
  };

  it('keeps no planted secret in the journal, NDJSON, HAR, findings, report, log or converted scenarios', async () => {
    await plantAll();
    // The corpus reached the target (the proxy passes requests on unchanged), and its answers hold them.
    const seen = received.join('\n');
    for (const name of ['echoedNumber', 'echoedArray', 'pw', 'multipartPassword', 'curlPassword'] as const)
      expect(seen, `the target received ${name}`).toContain(PLANTED[name]);
    expect(raw.map((a) => JSON.stringify(a)).join('\n')).toContain(PLANTED.codeSecret);

    const outputs: Record<string, string> = await outputsOfProxy();
    for (const { shape, har } of thirdPartyHars()) {
      const file = join(dir, `third-party-${shape}.har`);
      writeFileSync(file, har);
      const converted = await runCli(['scenario', 'from-har', file]);
      expect(converted.code, converted.stderr).toBe(0);
      outputs[`converted ${shape} HAR`] = converted.stdout + converted.stderr;
    }
    // Every output has something to hold: the exchanges are in it.
    expect(outputs.journal).toContain('/v1/web/search');
    expect(outputs.findings).toContain('ratelimit.retry-after-format');
    expect(outputs['converted text HAR']).toContain('query is required');

    const leaks: string[] = [];
    for (const [output, text] of Object.entries(outputs)) {
      // What a reader decodes too: JSON string escapes, then percent-escapes.
      const readings = [text, text.replaceAll('\\\\', '\\').replaceAll('\\"', '"')];
      for (const [name, secret] of Object.entries(PLANTED))
        if (readings.some((t) => t.includes(secret))) leaks.push(`${name} in the ${output}`);
      for (const spelling of adminSpellings)
        if (readings.some((t) => t.includes(spelling)))
          leaks.push(`admin key as ${spelling} in the ${output}`);
    }
    expect(leaks).toEqual([]);
  }, 120_000);

  it('never forwards the admin key, in any spelling, in a header value, a header name or the query', () => {
    const seen = received.join('\n');
    const leaks = adminSpellings.filter((spelling) => seen.includes(spelling));
    expect(leaks).toEqual([]);
    // The headers carrying no key reached the target: the whoami calls were forwarded, without the key.
    expect(received.filter((r) => r.includes('/v1/whoami')).length).toBeGreaterThan(ADMIN_HEADERS.length);
  });
});

describe('the shapes, one by one, through the one redaction (no scan: by place alone)', () => {
  const same = (text: string) => text;
  const jwt = (header: string) =>
    `${b64url(header)}.${b64url('{"sub":"shape-jwt-sub-1"}')}.k9Qw3Zx7Lm2Np8Rt5Vy1Bc4Df6Gh0Jk2Mn4Pq6St8Uv`;
  const SHAPES: [string, string, string][] = [
    [
      'number echoed in a JSON string',
      JSON.stringify({ got: JSON.stringify({ password: 4815162342 }) }),
      '4815162342',
    ],
    ['array echoed', JSON.stringify({ got: JSON.stringify({ tokens: ['shape-arr-1'] }) }), 'shape-arr-1'],
    [
      'object echoed twice',
      JSON.stringify({ a: JSON.stringify({ b: JSON.stringify({ credentials: { k: 'shape-obj-2' } }) }) }),
      'shape-obj-2',
    ],
    ['JSON in prose', 'Invalid body: {"secret": 99887766, "ok": true}', '99887766'],
    [
      'multipart after a preamble',
      'x\r\n--B\r\nContent-Disposition: form-data; name="pw"\r\n\r\nshape-mp-3\r\n--B--',
      'shape-mp-3',
    ],
    [
      'multipart with bare LF',
      '--B\nContent-Disposition: form-data; name=token\n\nshape-mp-4\n--B--',
      'shape-mp-4',
    ],
    ['double-encoded name', 'a=1&api%255Fkey=shape-dbl-5', 'shape-dbl-5'],
    [
      'double-encoded URL in a value',
      `n=${encodeURIComponent(encodeURIComponent('https://x/?token=shape-dbl-6'))}`,
      'shape-dbl-6',
    ],
    ['pw', 'pw=shape-pw-7', 'shape-pw-7'],
    ['reset_token', '{"reset_token":"shape-reset-8"}', 'shape-reset-8'],
    ['primaryKey', '{"primaryKey":"shape-primary-9"}', 'shape-primary-9'],
    ['curl -u', 'curl -u bob:shape-curl-10 https://x', 'shape-curl-10'],
    ['curl --user=', 'curl --user=bob:shape-curl-11 https://x', 'shape-curl-11'],
    [
      'a YAML line in a JSON string',
      JSON.stringify({ note: 'user: bob\npassword: shape-yaml-12' }),
      'shape-yaml-12',
    ],
  ];
  it.each(SHAPES)('%s', (_name, text, secret) => {
    expect(captureBody(text, 100_000, same)).not.toContain(secret);
  });

  it('JWTs of any header spelling go whole; a full stop after a dotted word is not a JWT', () => {
    const scan = createSecretScanner({ version: () => 0, keys: () => [], canaries: [] });
    for (const header of [
      '{"alg":"HS256"}',
      '{ "alg": "HS256" }',
      '{\n  "alg": "RS256"\n}',
      '{\t"typ":"JWT"}',
    ]) {
      const { redacted, kinds } = scan(`token ${jwt(header)} ok`, {});
      expect(redacted, header).toBe('token [REDACTED:jwt] ok');
      expect(kinds).toEqual(['jwt']);
    }
    expect(scan('see eyebrows.example.com. ok', {}).kinds).toEqual([]);
  });

  it('keeps what holds no credential: counts, identifiers, prose', () => {
    const text = JSON.stringify({ max_tokens: 100, sort_key: 'name', note: 'use -u to update: done' });
    expect(captureBody(text, 100_000, same)).toBe(text);
  });
});

describe("the gateway's own journal reads the same way", () => {
  it('a search query quoting JSON with a number under a credential name keeps no credential', async () => {
    const gateway = createGateway({ log: () => {} });
    const token = gateway.mintToken('agent-verified');
    const query = 'why does {"password": 8675309, "tokens": ["query-json-tok-1"]} fail';
    const res = await gateway.fetch(
      new Request('http://gw.test/v1/web/search', {
        method: 'POST',
        headers: { 'content-type': 'application/json', [IDENTITY_HEADER_KEY]: token },
        body: JSON.stringify({ query }),
      }),
    );
    expect(res.status).toBe(200);
    const kept = JSON.stringify(gateway.journal.list());
    expect(kept).toContain('why does');
    expect(kept).not.toMatch(/8675309|query-json-tok-1/);
  });
});
