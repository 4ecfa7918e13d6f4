import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticToken } from '../tokens/token-source.ts';
import { curlFor } from './curl.ts';
import { createSuiteClient } from './http-client.ts';

interface Received {
  method: string;
  url: string;
  rawHeaders: string[];
  body: string;
}

/** A server that records exactly what arrived (raw header names and value bytes), then answers 200. */
let received: Received[] = [];
const server = createServer((req: IncomingMessage, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push({
      method: req.method ?? '',
      url: req.url ?? '',
      rawHeaders: req.rawHeaders,
      body: Buffer.concat(chunks).toString('latin1'),
    });
    res.end('{}');
  });
});
let base = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const TOKEN = 'agt1.eyJzdWIiOiJhIn0.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ';
const identity = (r: Received) => {
  const i = r.rawHeaders.findIndex((h) => h.toLowerCase() === 'x-agent-identity');
  return { name: r.rawHeaders[i], value: r.rawHeaders[i + 1] };
};
const runCurl = (command: string) =>
  new Promise<void>((resolve, reject) =>
    execFile('bash', ['-c', `${command} -o /dev/null`], { env: { ...process.env, TOKEN } }, (error) =>
      error ? reject(error) : resolve(),
    ),
  );

describe('curl reproductions', () => {
  it.each([
    [
      'the valid token, odd header casing, JSON body',
      { kind: 'derived', from: 'valid', transform: { op: 'none' } },
      'x-AGENT-identity',
    ],
    [
      'a changed character',
      { kind: 'derived', from: 'valid', transform: { op: 'replace', at: 0.4, char: 'Z' } },
      undefined,
    ],
    [
      'a truncated token',
      { kind: 'derived', from: 'valid', transform: { op: 'truncate', keep: 0.5 } },
      undefined,
    ],
    [
      'an extended token',
      { kind: 'derived', from: 'valid', transform: { op: 'append', suffix: "x'y" } },
      undefined,
    ],
    ['a unicode literal', { kind: 'literal', value: 'tok\u{1F916}é\u202e' }, undefined],
    ['a unicode literal without a body (GET)', { kind: 'literal', value: 'caf\u00e9\u{1F916}' }, undefined],
  ] as const)('send the same bytes as the suite did: %s', async (name, token, tokenHeader) => {
    const get = name.includes('GET');
    const client = createSuiteClient({
      baseUrl: base,
      tokens: { valid: staticToken(TOKEN, '$TOKEN') },
      maxWaitSeconds: 1,
    });
    received = [];
    const exchange = await client.send({
      method: get ? 'GET' : 'POST',
      path: '/v1/web/search?x=1',
      token: token as never,
      tokenHeader,
      headers: get ? {} : { 'Content-Type': 'application/json' },
      body: get ? undefined : JSON.stringify({ query: "it's \u00e9 \u{1F916}" }),
    });
    client.close();
    const command = curlFor(exchange);
    expect(command).not.toContain(TOKEN);
    await runCurl(command);
    const [bySuite, byCurl] = received as [Received, Received];
    expect(byCurl.method).toBe(bySuite.method);
    expect(byCurl.url).toBe(bySuite.url);
    expect(identity(byCurl)).toEqual(identity(bySuite));
    expect(byCurl.body).toBe(bySuite.body);
    // The token's bytes are its UTF-8 encoding, exactly (no double encoding on the way).
    if (token.kind === 'literal')
      expect(Buffer.from(identity(bySuite).value ?? '', 'latin1').toString('utf8')).toBe(token.value);
  });
});
