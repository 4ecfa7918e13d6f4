import { describe, expect, it } from 'vitest';
import { createGateway } from '../gateway.ts';
import { requestIdFor } from './request-id.ts';

describe('requestIdFor', () => {
  it('echoes a plain caller id and replaces anything else with a UUID', () => {
    expect(requestIdFor('abc-123.x:y')).toBe('abc-123.x:y');
    for (const given of ['has space', 'x'.repeat(129), 'new\u00e9line', '', undefined]) {
      expect(requestIdFor(given)).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('the request id of a call', () => {
  it('is never a secret: an X-Request-Id the secret scan flags is neither echoed nor journaled', async () => {
    const gateway = createGateway();
    const token = gateway.mintToken('agent-verified');
    const signature = token.split('.')[2] as string;
    const other = gateway.mintToken('agent-early');
    const cases: [string, Record<string, string>][] = [
      ['/v1/whoami', { 'x-agent-identity': token, 'x-request-id': signature }],
      ['/v1/health', { 'x-request-id': 'ak_verified_2b8d4f6a1c9e' }],
      ['/v1/health', { 'x-request-id': `${other.split('.')[1]}.${other.split('.')[2]}` }],
      ['/v1/health', { 'x-request-id': 'AKIAABCDEFGHIJKLMNOP' }],
    ];
    for (const [path, headers] of cases) {
      const response = await gateway.fetch(new Request(`http://gw.test${path}`, { headers }));
      const given = headers['x-request-id'] as string;
      const id = response.headers.get('x-request-id') ?? '';
      expect([given, id]).toEqual([given, expect.stringMatching(/^[0-9a-f-]{36}$/)]);
      expect(JSON.stringify(await response.json())).not.toContain(given);
    }
    const journal = JSON.stringify(gateway.journal.list());
    for (const [, headers] of cases) expect(journal).not.toContain(headers['x-request-id']);
    // A plain id is still echoed and journaled as sent.
    const plain = await gateway.fetch(
      new Request('http://gw.test/v1/health', { headers: { 'x-request-id': 'trace-42' } }),
    );
    expect(plain.headers.get('x-request-id')).toBe('trace-42');
    expect(gateway.journal.list().at(-1)?.request_id).toBe('trace-42');
  });
});
