import { describe, expect, it } from 'vitest';
import { createClock } from '../mock-server/clock.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { search } from './support/call.ts';

const setup = (config = {}) => {
  const gateway = createGateway({
    config,
    clock: createClock({ frozen: true, startAt: Date.parse('2026-01-01T00:00:00Z') }),
  });
  return { gateway, token: gateway.mintToken('agent-verified') };
};

describe('Idempotency-Key on tool calls (reference profile)', () => {
  it('the same key and body replay the stored response, marked Idempotent-Replayed', async () => {
    const { gateway, token } = setup();
    const first = await search(gateway, token, 'llamas', { 'idempotency-key': '"k-1"' });
    const again = await search(gateway, token, 'llamas', { 'idempotency-key': '"k-1"' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const journal = gateway.journal.list().map((e) => e.idempotency);
    expect(journal).toEqual(['stored', 'replayed']);
  });

  it('the same key with another body is 422 idempotency_key_reused; the original stays replayable', async () => {
    const { gateway, token } = setup();
    await search(gateway, token, 'llamas', { 'idempotency-key': 'k-2' });
    const other = await search(gateway, token, 'alpacas', { 'idempotency-key': 'k-2' });
    expect([other.status, other.body.code]).toEqual([422, 'idempotency_key_reused']);
    expect(
      (await search(gateway, token, 'llamas', { 'idempotency-key': 'k-2' })).headers.get(
        'idempotent-replayed',
      ),
    ).toBe('true');
  });

  it('a key still being processed is 409 idempotency_key_in_use', async () => {
    const { gateway, token } = setup({ tools: { 'web.search': { latency_ms: 150 } } });
    const [a, b] = await Promise.all([
      search(gateway, token, 'llamas', { 'idempotency-key': 'k-3' }),
      search(gateway, token, 'llamas', { 'idempotency-key': 'k-3' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
  });

  it('a failed attempt is not stored: retrying under the same key runs again', async () => {
    const { gateway, token } = setup();
    gateway.faults.add({
      match: { operation: 'web.search' },
      kind: 'status',
      status: 503,
      count: 1,
      every: 1,
      delay_ms: 0,
    });
    expect((await search(gateway, token, 'llamas', { 'idempotency-key': 'k-4' })).status).toBe(503);
    const retry = await search(gateway, token, 'llamas', { 'idempotency-key': 'k-4' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('keys expire on the virtual clock, and are per agent', async () => {
    const { gateway, token } = setup({ idempotency: { ttl_seconds: 60 } });
    await search(gateway, token, 'llamas', { 'idempotency-key': 'k-5' });
    expect(
      (await search(gateway, gateway.mintToken('agent-allowlisted'), 'alpacas', { 'idempotency-key': 'k-5' }))
        .status,
    ).toBe(200);
    gateway.clock.advance(60_001);
    const later = await search(gateway, token, 'alpacas', { 'idempotency-key': 'k-5' });
    expect(later.status).toBe(200);
  });

  it('a malformed key is 400 naming the header', async () => {
    const { gateway, token } = setup();
    const bad = await search(gateway, token, 'llamas', { 'idempotency-key': 'two words' });
    expect([bad.status, bad.body.field]).toEqual([400, 'Idempotency-Key']);
  });
});
