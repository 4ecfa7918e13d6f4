import { describe, expect, it, vi } from 'vitest';
import { createGateway } from '../mock-server/gateway.ts';

/*
 * Client rule 2 (spec section 1): the journal names where a secret was sent (`secrets_in`), never what. A
 * body key or a header name is text the agent chose: one holding the token must not carry it into the
 * journal or the client report.
 */
describe('secret places never hold the text they name', () => {
  it('a body key and a header name holding the token leave it nowhere in the journal or the report', async () => {
    const gateway = createGateway({ log: () => {} });
    const token = gateway.mintToken('agent-verified');
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      gateway.fetch(
        new Request('http://gateway.test/v1/web/search', {
          method: 'POST',
          headers: { 'x-agent-identity': token, 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        }),
      );
    // The key holds the token, and so does a string under it (found, so the place is named).
    await post({ query: 'weather', [token]: { [`note-${token}`]: `again ${token}` } });
    await post({ query: 'weather', [token]: [`again ${token}`] });
    // A header named after the token (a header name takes the token's characters), its value the token too.
    await post({ query: 'weather' }, { [`x-${token}`]: token });
    const entries = gateway.journal.list({ agent: 'agent-verified' });
    expect(entries).toHaveLength(3);
    // Seen: each request's leak was found and placed.
    for (const entry of entries) expect(entry.secrets_in?.length ?? 0).toBeGreaterThan(0);
    const report = gateway.clientReport('agent-verified');
    expect(report.violations.map((v) => v.rule)).toContain('no-secrets-in-requests');
    // A header name arrives in lower case: the token is looked for in any case, and its signature alone.
    for (const text of [JSON.stringify(entries), JSON.stringify(report)].map((t) => t.toLowerCase())) {
      expect(text).not.toContain(token.toLowerCase());
      expect(text).not.toContain((token.split('.')[2] as string).toLowerCase());
    }
  });
});

describe('a tool call body is parsed once', () => {
  it('the secret scan walks the body as parsed for validation (JSON.parse runs once per call)', async () => {
    const gateway = createGateway({ log: () => {} });
    const token = gateway.mintToken('agent-verified');
    const request = new Request('http://gateway.test/v1/web/search', {
      method: 'POST',
      headers: { 'x-agent-identity': token, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'weather', note: { deep: 'ak_verified_2b8d4f6a1c9e' } }),
    });
    const parse = vi.spyOn(JSON, 'parse');
    let parses: number;
    try {
      expect((await gateway.fetch(request)).status).toBe(200);
      parses = parse.mock.calls.filter(([text]) => String(text).includes('"weather"')).length;
    } finally {
      parse.mockRestore();
    }
    expect(parses).toBe(1);
    // And the nested field was still scanned.
    expect(gateway.journal.list({ agent: 'agent-verified' })[0]?.secrets_in).toEqual(['body.note.deep']);
  });
});

describe('headers scanned for secrets', () => {
  const AWS = 'AKIAABCDEFGHIJKLMNOP';
  const call = async (headers: Record<string, string>) => {
    const gateway = createGateway({ log: () => {} });
    const token = gateway.mintToken('agent-verified');
    const scan = vi.spyOn(gateway.runtime, 'scanSecrets');
    await gateway.fetch(
      new Request('http://gateway.test/v1/whoami', { headers: { 'x-agent-identity': token, ...headers } }),
    );
    // What the request itself scanned (reading the journal later redacts its kept exchange: not the hot path).
    const scanned = scan.mock.calls.map(([text]) => text);
    return { scanned, entry: gateway.journal.list({ agent: 'agent-verified' })[0] };
  };

  it('skips header values that are protocol tokens (no secret can be one)', async () => {
    const { scanned, entry } = await call({
      accept: 'application/json',
      'accept-encoding': 'gzip, deflate, br',
      connection: 'keep-alive',
      'content-type': 'application/json; charset=utf-8',
    });
    expect(scanned.filter((t) => /json|gzip|keep-alive/.test(t))).toEqual([]);
    expect(entry?.secrets_in).toBeUndefined();
  });

  it('still finds a secret in user-agent, a custom header, or an odd value of a fixed-format header', async () => {
    const { entry } = await call({
      'user-agent': `agent/1.0 (${AWS})`,
      'x-trace': AWS,
      accept: `application/json; key=${AWS}`,
      connection: AWS,
    });
    expect(entry?.secrets_in).toEqual(
      expect.arrayContaining(['header user-agent', 'header x-trace', 'header accept', 'header connection']),
    );
  });

  it('does not take a credential presented to the gateway (SDK auth headers) for a leaked secret', async () => {
    const gateway = createGateway({ log: () => {} });
    const token = gateway.mintToken('agent-verified');
    const apiKey = 'ak_verified_2b8d4f6a1c9e';
    await gateway.fetch(
      new Request('http://gateway.test/v1/whoami', {
        headers: {
          'x-agent-identity': token,
          'x-api-key': apiKey,
          authorization: `Bearer ${token}`,
          'x-debug-token': token,
        },
      }),
    );
    const entry = gateway.journal.list({ agent: 'agent-verified' })[0];
    expect(entry?.secrets_in).toEqual(['header x-debug-token']);
  });
});
