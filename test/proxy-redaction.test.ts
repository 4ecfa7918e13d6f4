import { createServer, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '../mock-server/adapters/node-server.ts';
import { captureBody, redactHeaderPairs } from '../mock-server/journal/exchange-capture.ts';
import type { Har } from '../mock-server/journal/har.ts';
import { createProxy } from '../mock-server/proxy/proxy.ts';
import { credentialNames, speaksOfCredential } from '../mock-server/secrets/credential-names.ts';

/*
 * Issue 31 point 4: the proxy's journal, its NDJSON export and its HAR export are safe to attach to a public
 * bug report. A real loopback target, the proxy in front of it over real sockets, and credentials wherever
 * they sit (the audit's cases first); none of them may appear in anything the admin API gives out, while the
 * target still receives every one of them (the proxy passes requests on unchanged).
 */

const ADMIN = 'redaction-test-admin-key';
const admin = { 'x-admin-key': ADMIN };
const same = (text: string) => text;

describe('which names speak of a credential', () => {
  it('any prefix, any case, dashes or underscores or camelCase; not words that only look alike', () => {
    for (const name of [
      'Private-Token',
      'X-Auth-Token',
      'x-upstream-token',
      'X-Api-Key',
      'Cookie',
      'Set-Cookie',
      'Authorization',
      'Proxy-Authorization',
      'api_key',
      'API-KEY',
      'apiKey',
      'ApiKey',
      'client_secret',
      'clientSecret',
      'PASSWORD',
      'Pass_Word',
      'passwd',
      'user[password]',
      'x-session-id',
      'JSESSIONID',
      'access_token',
      'refreshToken',
      'X-Amz-Security-Token',
      'X-Amz-Signature',
      'sig',
      'credentials',
      'privateKey',
      'x-goog-api-key',
      'pw',
      'reset_token',
      'primaryKey',
      'secondary_key',
    ])
      expect(speaksOfCredential(name), name).toBe(true);
    for (const name of [
      'author',
      'Authority',
      'tokenizer',
      'max_tokens',
      'x-ratelimit-remaining-tokens',
      'x-ratelimit-reset-tokens',
      'max_token',
      'sort_key',
      'Idempotency-Key',
      'public_key',
      'Content-Type',
      'Keep-Alive',
      'query',
      'code',
      'bypass',
      'Access-Control-Allow-Credentials',
      'X-Request-Id',
    ])
      expect(speaksOfCredential(name), name).toBe(false);
  });

  it('a kept name is kept in any spelling', () => {
    const isCredential = credentialNames(['X-Upstream-Token']);
    expect(isCredential('x_upstream_token')).toBe(false);
    expect(isCredential('xUpstreamToken')).toBe(false);
    expect(isCredential('X-Auth-Token')).toBe(true);
  });
});

describe('the capture redacts by place, before it cuts', () => {
  it('a JSON credential cut at the capture limit does not survive, however the cut falls', () => {
    const secret = 'hunter2-0123456789abcdefghijklmnop';
    const body = JSON.stringify({ pad: 'x'.repeat(40), password: secret, after: 'y'.repeat(40) });
    const at = body.indexOf(secret);
    for (let max = at - 3; max <= at + secret.length + 2; max++) {
      const kept = captureBody(body, max, same) as string;
      expect(Buffer.byteLength(kept), `max ${max}`).toBeLessThanOrEqual(max);
      for (let n = 4; n <= secret.length; n++) expect(kept, `max ${max}`).not.toContain(secret.slice(0, n));
    }
    // Open to the end of what was taken (a value longer than the margin): redacted to the end.
    const open = `{"pad":"${'x'.repeat(20)}","api_key":"${'k'.repeat(9000)}`;
    expect(captureBody(open, 40, same)).not.toMatch(/kkkk/);
  });

  it('form, multipart, nested JSON arrays, query strings, URL passwords, schemes in text', () => {
    expect(captureBody('api_key=ak_live_123&password=pw%21x&name=bob', 500, same)).toBe(
      'api_key=[REDACTED]&password=[REDACTED]&name=bob',
    );
    // Percent-encoded JSON in a form field, and a URL with its own query in another.
    const encoded = captureBody(
      `payload=${encodeURIComponent(JSON.stringify({ deep: { password: 'enc-json-secret' } }))}&redirect=${encodeURIComponent('https://x.example/cb?access_token=enc-url-secret&s=1')}&q=hi`,
      1000,
      same,
    ) as string;
    expect(decodeURIComponent(encoded)).not.toMatch(/enc-json-secret|enc-url-secret/);
    expect(decodeURIComponent(encoded)).toContain('"password":"[REDACTED]"');
    expect(captureBody('user%5Bpassword%5D=pw&API-Key=k1', 500, same)).toBe(
      'user%5Bpassword%5D=[REDACTED]&API-Key=[REDACTED]',
    );
    const multipart =
      '--XyZ\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n' +
      '--XyZ\r\nContent-Disposition: form-data; name="Password"\r\n\r\nmultipart-secret-1\r\n' +
      '--XyZ\r\nContent-Disposition: form-data; name="client_secret"\r\n\r\nmultipart-secret-2';
    const keptMultipart = captureBody(multipart, 1000, same) as string;
    expect(keptMultipart).toContain('hello');
    expect(keptMultipart).not.toMatch(/multipart-secret/);
    const nested = JSON.stringify({
      data: [{ auth: { tokens: ['bearer-in-array-1', { value: 'bearer-in-array-2' }] } }],
      Access_Token: 'case-and-underscore',
      'x-api-key': 'dashes',
      pin: 123456,
      max_tokens: 1000,
      author: 'Jane',
    });
    const keptNested = captureBody(nested, 1000, same) as string;
    expect(keptNested).not.toMatch(/bearer-in-array|case-and-underscore|dashes|123456/);
    expect(JSON.parse(keptNested)).toMatchObject({ max_tokens: 1000, author: 'Jane' });
    const text = captureBody(
      'see https://bob:url-password-1@example.com/x?access_token=qs-secret-1&q=ok and Authorization: Basic dXNlcjpwYXNzd29yZA==',
      1000,
      same,
    ) as string;
    expect(text).not.toMatch(/url-password-1|qs-secret-1|dXNlcjpwYXNzd29yZA/);
    expect(text).toContain('q=ok');
  });

  it('JSON held in a JSON string, plain-text and YAML pairs, and known shapes under any name', () => {
    const escaped = captureBody(
      JSON.stringify({ body: JSON.stringify({ password: 'escaped-secret-1', q: 'kept' }) }),
      1000,
      same,
    ) as string;
    expect(escaped).not.toContain('escaped-secret-1');
    expect(escaped).toContain('kept');
    expect(captureBody('user: bob\npassword: yaml-secret-1\nX-Auth-Token: dump-secret-1', 1000, same)).toBe(
      'user: bob\npassword: [REDACTED]\nX-Auth-Token: [REDACTED]',
    );
    expect(captureBody('author: Jane\nToken expired', 1000, same)).toBe('author: Jane\nToken expired');
    expect(captureBody('curl -H "x: bearer abc123def456" https://a.example', 1000, same)).toBe(
      'curl -H "x: bearer [REDACTED]" https://a.example',
    );
  });

  it('headers: credential names redacted whole (scheme and cookie names kept), URLs in others cleaned', () => {
    const pairs = redactHeaderPairs(
      [
        'Private-Token',
        'glpat-aBcDeFgHiJkLmNoPqRsT',
        'X-Auth-Token',
        'plain',
        'Authorization',
        'Basic dXNlcjpwYXNz',
        'Cookie',
        'sid=abc123; theme=dark',
        'Set-Cookie',
        'session=s3cr3t-value; Path=/; HttpOnly',
        'Referer',
        'http://127.0.0.1/cb?code_verifier=x&access_token=referer-secret',
        'Idempotency-Key',
        'idem-1',
      ],
      same,
    );
    expect(pairs).toEqual([
      ['Private-Token', '[REDACTED]'],
      ['X-Auth-Token', '[REDACTED]'],
      ['Authorization', 'Basic [REDACTED]'],
      ['Cookie', 'sid=[REDACTED]; theme=[REDACTED]'],
      ['Set-Cookie', 'session=[REDACTED]; Path=/; HttpOnly'],
      ['Referer', 'http://127.0.0.1/cb?code_verifier=x&access_token=[REDACTED]'],
      ['Idempotency-Key', 'idem-1'],
    ]);
  });
});

describe('through the proxy: the journal, the NDJSON and the HAR export hold no credential', () => {
  const received: { url: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const target = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(200, {
        'content-type': 'application/json',
        'x-upstream-token': 'upstream-header-secret',
        'set-cookie': ['sid=response-cookie-secret; Path=/', 'theme=dark'],
      });
      res.end(JSON.stringify({ ok: true, session: { token: 'response-body-secret' } }));
    });
  });
  let proxyUrl = '';
  let keepingUrl = '';
  const closers: (() => unknown)[] = [];

  beforeAll(async () => {
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const address = target.address() as { port: number };
    const targetUrl = `http://127.0.0.1:${address.port}`;
    const start = async (keepField?: string[]) => {
      const proxy = createProxy({
        target: targetUrl,
        adminKey: ADMIN,
        log: () => {},
        config: { journal: { body_bytes: 64 } },
        keepField,
      });
      const server = await serve(proxy, { port: 0, log: () => {} });
      closers.push(
        () => server.close(),
        () => proxy.close(),
      );
      return server.url;
    };
    proxyUrl = await start();
    keepingUrl = await start(['X-Debug-Token']);
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    target.closeAllConnections();
    await new Promise<void>((resolve) => target.close(() => resolve()));
  });

  // Every secret sent, and where: the audit's cases, then more.
  const SECRETS = [
    'form-api-key-1',
    'form-password-1',
    'cut-json-secret-0123456789',
    'glpat-AbCdEfGhIjKlMnOpQrSt',
    'opaque-x-auth-token',
    'upstream-header-secret',
    'response-cookie-secret',
    'response-body-secret',
    'basic-dXNlcjpwYXNzd29yZA',
    'nested-bearer-1',
    'multipart-password-1',
    'query-access-token-1',
    'request-cookie-secret',
    'key-case-dashes-1',
    'fetch-url-key-1',
    'multipart-json-secret-1',
  ];

  const send = async (base: string) => {
    const post = (path: string, body: string, headers: Record<string, string>) =>
      fetch(`${base}${path}`, { method: 'POST', headers, body }).then((r) => r.text());
    await post('/v1/token', 'api_key=form-api-key-1&password=form-password-1', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    // The credential straddles the journal's 64 bytes.
    await post('/v1/login', JSON.stringify({ pad: 'p'.repeat(30), password: 'cut-json-secret-0123456789' }), {
      'content-type': 'application/json',
    });
    await fetch(`${base}/api/v4/projects?access_token=query-access-token-1&page=2`, {
      headers: {
        'Private-Token': 'glpat-AbCdEfGhIjKlMnOpQrSt',
        'X-Auth-Token': 'opaque-x-auth-token',
        Authorization: 'Basic basic-dXNlcjpwYXNzd29yZA',
        Cookie: 'sid=request-cookie-secret',
        'X-Debug-Token': 'debug-kept-1',
      },
    }).then((r) => r.text());
    await post(
      '/v1/nested',
      JSON.stringify({ a: { Auth: [['Bearer nested-bearer-1']] }, 'API-KEY': 'key-case-dashes-1' }),
      {
        'content-type': 'application/json',
      },
    );
    await post(
      '/v1/web/fetch',
      JSON.stringify({ url: 'https://api.example.com/data?api_key=fetch-url-key-1' }),
      {
        'content-type': 'application/json',
      },
    );
    const form = new FormData();
    form.set('user', 'bob');
    form.set('password', 'multipart-password-1');
    form.set(
      'payload',
      new Blob([JSON.stringify({ deep: [{ client_secret: 'multipart-json-secret-1' }] })], {
        type: 'application/json',
      }),
      'payload.json',
    );
    await fetch(`${base}/v1/upload`, { method: 'POST', body: form }).then((r) => r.text());
  };

  const everything = async (base: string) => {
    const journal = await (await fetch(`${base}/__admin/journal`, { headers: admin })).text();
    const ndjson = await (await fetch(`${base}/__admin/journal/export`, { headers: admin })).text();
    const harText = await (await fetch(`${base}/__admin/export?format=har`, { headers: admin })).text();
    return { journal, ndjson, harText, har: JSON.parse(harText) as Har };
  };

  it("keeps none of the secrets, though the target received each of them, and the HAR keeps the exchange's shape", async () => {
    received.length = 0;
    await send(proxyUrl);
    const seen = JSON.stringify(received);
    for (const secret of SECRETS.filter((s) => !s.startsWith('response') && !s.startsWith('upstream')))
      expect(seen, `the target received ${secret}`).toContain(secret);
    const { journal, ndjson, harText, har } = await everything(proxyUrl);
    for (const [name, text] of Object.entries({ journal, ndjson, harText }))
      for (const secret of SECRETS) {
        expect(text, `${secret} in the ${name}`).not.toContain(secret);
        // Nor a piece of it long enough to matter.
        expect(text, `a piece of ${secret} in the ${name}`).not.toContain(secret.slice(0, 12));
      }
    expect(ndjson.trim().split('\n')).toHaveLength(6);
    const projects = har.log.entries.find((e) => e.request.url.includes('/api/v4/projects'));
    expect(projects?.request.url).toMatch(/\?access_token=\[REDACTED\]&page=2$/);
    expect(projects?.request.queryString).toContainEqual({ name: 'page', value: '2' });
    expect(projects?.request.headers).toContainEqual({ name: 'Private-Token', value: '[REDACTED]' });
    expect(projects?.request.headers).toContainEqual({ name: 'X-Debug-Token', value: '[REDACTED]' });
    expect(projects?.response.headers).toContainEqual({ name: 'x-upstream-token', value: '[REDACTED]' });
    expect(projects?.response.headers).toContainEqual({ name: 'set-cookie', value: 'theme=[REDACTED]' });
  });

  it('--keep-field keeps a named field as sent, and nothing else', async () => {
    await send(keepingUrl);
    const { journal, har } = await everything(keepingUrl);
    const projects = har.log.entries.find((e) => e.request.url.includes('/api/v4/projects'));
    expect(projects?.request.headers).toContainEqual({ name: 'X-Debug-Token', value: 'debug-kept-1' });
    for (const secret of SECRETS) expect(journal).not.toContain(secret);
  });
});
