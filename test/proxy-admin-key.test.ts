import { createServer, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { serve } from '../mock-server/adapters/node-server.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { createProxy } from '../mock-server/proxy/proxy.ts';
import { runCli } from './support/cli.ts';
import { useProxyInFront } from './support/proxy-in-front.ts';

/*
 * Issue 31 point 6: the proxy never sends its own admin key upstream. Every spelling of the admin path is
 * read with the gateway router's rule (routingPath): it reaches the proxy's admin API, or it goes to the
 * target without the proxy's credentials. Paths are sent raw (node:http), as fetch would normalise them.
 * And a key no request could send is refused at start, by serve and by proxy (exit 2).
 */

const ADMIN = 'proxy-own-admin-key-9f3c';

/** One raw request (the path as given, not normalised): its status and body. */
function raw(base: string, path: string, headers: Record<string, string>) {
  const { port } = new URL(base);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: Number(port), path, headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the proxy keeps its admin key to itself', () => {
  const received: { url: string; headers: string[] }[] = [];
  const target = createServer((req, res) => {
    received.push({ url: req.url ?? '', headers: req.rawHeaders });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"from":"target"}');
  });
  const proxyUrl = useProxyInFront(target, ADMIN);

  const SPELLINGS = [
    '/__admin/journal',
    '//__admin/journal',
    '///__admin/journal',
    '/__ADMIN/journal',
    '/__Admin/journal',
    '/v1/../__admin/journal',
    '/v1/%2e%2e/__admin/journal',
    '/v1/%2E%2E/__admin/journal',
    '/%5F%5Fadmin/journal',
    '/%5f%5fadmin/journal',
    '/./__admin/journal',
    '/%2e/__admin/journal',
    '/__admin/./journal',
    '/__admin//journal',
    '/__admin/journal/',
    '/__admin/journal/.',
    '/__admin/journal/..',
    '/__admin./journal',
    '/__admin../journal',
    '/__admin%2Fjournal',
    '/x/../../__admin/journal',
    '/__admin',
    '/__admin/',
    '/v1/whoami',
    // Absolute form, as HTTP proxies are sent requests.
    'http://127.0.0.1//__admin/journal',
    'http://example.com/v1/%2e%2e/__admin/journal',
    'http://example.com/v1/whoami?page=2',
  ];

  it('every spelling of /__admin reaches the admin API or the target without the key; none carries the key upstream', async () => {
    const outcomes: Record<string, string> = {};
    for (const path of SPELLINGS)
      for (const headers of [
        { 'x-admin-key': ADMIN },
        { authorization: `Bearer ${ADMIN}` },
        { 'x-other': ADMIN },
      ] as Record<string, string>[]) {
        const before = received.length;
        const answer = await raw(proxyUrl(), path, headers);
        const forwarded = received.length > before;
        outcomes[`${path} ${Object.keys(headers)[0]}`] = forwarded ? 'target' : `admin ${answer.status}`;
        if (forwarded) expect(answer.body, path).toBe('{"from":"target"}');
        else expect(answer.body, path).not.toBe('{"from":"target"}');
      }
    for (const { url, headers } of received) {
      expect(url).not.toContain(ADMIN);
      for (let i = 0; i < headers.length; i += 2) {
        expect((headers[i] as string).toLowerCase(), url).not.toBe('x-admin-key');
        expect(headers[i + 1], `${url} ${headers[i]}`).not.toContain(ADMIN);
      }
    }
    // The router's rule: these are the admin path, with the key given (X-Admin-Key or Bearer) 200, and the
    // proxy's own 401 without it; they never reach the target.
    for (const path of [
      '/__admin/journal',
      '//__admin/journal',
      '/v1/../__admin/journal',
      '/v1/%2e%2e/__admin/journal',
      '/%5F%5Fadmin/journal',
      '/./__admin/journal',
      '/__admin//journal',
      '/x/../../__admin/journal',
      'http://127.0.0.1//__admin/journal',
      'http://example.com/v1/%2e%2e/__admin/journal',
    ]) {
      expect(outcomes[`${path} x-admin-key`], path).toBe('admin 200');
      expect(outcomes[`${path} authorization`], path).toBe('admin 200');
      expect(outcomes[`${path} x-other`], path).toBe('admin 401');
    }
    // Other paths (another case, a trailing dot in a segment) are the target's, sent without the key.
    expect(outcomes['/__ADMIN/journal x-admin-key']).toBe('target');
    expect(outcomes['/__admin./journal authorization']).toBe('target');
    expect(outcomes['/v1/whoami x-other']).toBe('target');
    // An absolute-form target goes on in origin form, its query kept.
    expect(outcomes['http://example.com/v1/whoami?page=2 x-admin-key']).toBe('target');
    expect(received.map((r) => r.url)).toContain('/v1/whoami?page=2');
  });

  it('a URL carrying the admin key is refused (400), never forwarded, and the key is not journaled', async () => {
    const before = received.length;
    const answer = await raw(proxyUrl(), `/v1/whoami?k=${encodeURIComponent(ADMIN)}`, {});
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'invalid_request', proxy: true });
    expect(received.length).toBe(before);
    const journal = await raw(proxyUrl(), '/__admin/journal', { 'x-admin-key': ADMIN });
    const har = await raw(proxyUrl(), '/__admin/export?format=har', { 'x-admin-key': ADMIN });
    for (const text of [journal.body, har.body]) expect(text).not.toContain(ADMIN);
    expect(journal.body).toContain('proxy:admin_key_in_url');
  });
});

describe("the gateway's router reads the same spellings (one rule, routingPath)", () => {
  it('each spelling of /__admin is the admin API on serve too: the key is asked for, and the call is not journaled', async () => {
    const gateway = createGateway({ adminKey: ADMIN, log: () => {} });
    const server = await serve(gateway, { port: 0, log: () => {} });
    try {
      for (const path of [
        '//__admin/agents',
        '/v1/../__admin/agents',
        '/./__admin//agents',
        '/%5F%5Fadmin/agents',
      ]) {
        expect((await raw(server.url, path, {})).status, path).toBe(401);
        expect((await raw(server.url, path, { 'x-admin-key': ADMIN })).status, path).toBe(200);
      }
      const journal = await raw(server.url, '/__admin/journal', { 'x-admin-key': ADMIN });
      expect(JSON.parse(journal.body).entries).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('a blank admin key is refused at start (exit 2)', () => {
  it('proxy and serve, by flag and by environment: blank, spaces only, spaces at an end', async () => {
    const cases: [string[], Record<string, string>][] = [
      [['proxy', '--target', 'http://127.0.0.1:9', '--port', '0', '--admin-key', '        '], {}],
      [['proxy', '--target', 'http://127.0.0.1:9', '--port', '0'], { AGENT_GATEWAY_ADMIN_KEY: '   ' }],
      [['serve', '--port', '0', '--admin-key', ''], {}],
      [['serve', '--port', '0'], { AGENT_GATEWAY_ADMIN_KEY: '          ' }],
      [['serve', '--port', '0', '--admin-key', ' padded-admin-key '], {}],
    ];
    const results = await Promise.all(cases.map(([args, env]) => runCli(args, { env, timeoutMs: 60_000 })));
    for (const [i, result] of results.entries()) {
      const [args, env] = cases[i] as [string[], Record<string, string>];
      expect(result.code, `${args.join(' ')} ${JSON.stringify(env)}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toMatch(/admin key (is blank|starts or ends with a space)/);
      expect(result.stdout).not.toMatch(/listening/);
    }
    expect(results[1]?.stderr).toContain('$AGENT_GATEWAY_ADMIN_KEY');
  });

  it('the library refuses it too', () => {
    expect(() => createGateway({ adminKey: '   ', log: () => {} })).toThrow(/blank/);
    expect(() => createProxy({ target: 'http://127.0.0.1:9', adminKey: '\t' })).toThrow(/blank/);
  });

  it("proxy's flags come from its one declaration, and their bounds are checked", async () => {
    const help = await runCli(['proxy', '--help']);
    for (const flag of [
      '--connect-timeout-ms',
      '--first-byte-timeout-ms',
      '--idle-timeout-ms',
      '--keep-field',
    ])
      expect(help.stdout).toContain(flag);
    expect(help.stdout).toMatch(/default 30000/);
    const bad = await runCli(['proxy', '--target', 'http://127.0.0.1:9', '--idle-timeout-ms', '0']);
    expect(bad.code).toBe(2);
  });
});
