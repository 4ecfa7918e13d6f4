import { describe, expect, it } from 'vitest';
import { identityOf, stageContext, stageWorld, thrown } from '../../test/support/stage-context.ts';
import { idempotencyKey, type KeyOutcome } from './idempotency-key.ts';
import type { ToolSpec } from './tool-spec.ts';

const spec = { tool: 'web.search', path: '/v1/web/search', field: 'query' } as ToolSpec;
const bytes = (text: string) => new TextEncoder().encode(text);
const keyed = (key: string) => ({ headers: { 'idempotency-key': key } });

describe('idempotency-key stage (reference profile)', () => {
  it('does nothing without the header', () => {
    const world = stageWorld();
    const outcome = idempotencyKey(world, stageContext(world), identityOf('a'), spec, bytes('{}'), {});
    expect(outcome).not.toBeInstanceOf(Promise);
    expect((outcome as KeyOutcome).replay).toBeUndefined();
  });

  it('replays a settled answer with the current headers, and refuses the same key for another request (422)', async () => {
    const world = stageWorld();
    const agent = identityOf('agent-a');
    const first = stageContext(world, keyed('"k-1"'));
    const begun = idempotencyKey(world, first, agent, spec, bytes('{"query":"a"}'), {}) as KeyOutcome;
    begun.settle?.('{"results":[]}');
    expect(first.note.idempotency).toBe('stored');

    const again = stageContext(world, keyed('"k-1"'));
    const replay = idempotencyKey(world, again, agent, spec, bytes('{"query":"a"}'), { ratelimit: 'r=1' });
    const answer = (replay as KeyOutcome).replay;
    expect(answer?.status).toBe(200);
    expect(answer?.body).toBe('{"results":[]}');
    expect(answer?.headers).toMatchObject({ 'idempotent-replayed': 'true', ratelimit: 'r=1' });
    expect(again.note.idempotency).toBe('replayed');

    const other = await thrown(() =>
      idempotencyKey(world, stageContext(world, keyed('"k-1"')), agent, spec, bytes('{"query":"b"}'), {}),
    );
    expect(other.code).toBe('idempotency_key_reused');
    // Keys are per agent: another agent's k-1 is a new key.
    const elsewhere = idempotencyKey(
      world,
      stageContext(world, keyed('"k-1"')),
      identityOf('b'),
      spec,
      bytes('{}'),
      {},
    );
    expect((elsewhere as KeyOutcome).replay).toBeUndefined();
  });

  it('is 409 while the first request runs; a failed one frees the key for a retry', async () => {
    const world = stageWorld();
    const agent = identityOf('agent-a');
    const body = bytes('{"query":"a"}');
    const first = idempotencyKey(
      world,
      stageContext(world, keyed('k-2')),
      agent,
      spec,
      body,
      {},
    ) as KeyOutcome;
    const busy = await thrown(() =>
      idempotencyKey(world, stageContext(world, keyed('k-2')), agent, spec, body, {}),
    );
    expect(busy.code).toBe('idempotency_key_in_use');
    first.settle?.(undefined);
    const retry = idempotencyKey(world, stageContext(world, keyed('k-2')), agent, spec, body, {});
    expect((retry as KeyOutcome).replay).toBeUndefined();
  });

  it('refuses a malformed key with 400 naming the header', async () => {
    const world = stageWorld();
    const bad = await thrown(() =>
      idempotencyKey(
        world,
        stageContext(world, keyed('"unterminated')),
        identityOf('a'),
        spec,
        bytes('{}'),
        {},
      ),
    );
    expect(bad.code).toBe('invalid_request');
    expect(bad.details.field).toBe('Idempotency-Key');
  });
});
