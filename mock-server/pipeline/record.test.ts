import { describe, expect, it } from 'vitest';
import { stageContext, stageWorld } from '../../test/support/stage-context.ts';
import type { BodyTool } from '../http/context.ts';
import type { JournalEntry } from '../journal/journal.ts';
import type { ExchangeWork } from '../journal/record-ring.ts';
import { createSecretScanner } from '../secrets/secrets.ts';
import type { EntryReadings, JournalPort } from '../store/state-port.ts';
import { webSearch } from '../tools/web-search.ts';
import { DEFERRED_BODY_BYTES, recordCall } from './record.ts';
import { toolSpecOf } from './tool-spec.ts';

const TOKEN = 'eyJhZ2VudCI6ImEifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbi0wMTIzNDU2Nzg5';

/** A journal port that keeps what the stage hands it. */
function keepingJournal() {
  const recorded: {
    entry: Omit<JournalEntry, 'seq' | 'time'>;
    exchange?: ExchangeWork;
    readings?: EntryReadings;
  }[] = [];
  const journal: Pick<JournalPort, 'record'> = {
    record: (entry, exchange, readings) => {
      recorded.push({ entry, exchange, readings });
    },
  };
  return { recorded, state: { journal } };
}

describe('record stage', () => {
  it("journals the request with what the stages noted, its status, and times from the request's start", () => {
    const world = stageWorld();
    const ctx = stageContext(world, { path: '/v1/whoami', headers: { 'x-agent-identity': TOKEN } });
    Object.assign(ctx, { started: 100 });
    ctx.note.operation = 'whoami';
    ctx.note.agent = 'agent-a';
    recordCall(world, ctx, 200, 112.345, 113);
    const [entry] = world.parts.journal.list();
    expect(entry).toMatchObject({
      seq: 1,
      request_id: 'req-1',
      method: 'GET',
      path: '/v1/whoami',
      operation: 'whoami',
      status: 200,
      agent: 'agent-a',
      duration_ms: 12.35,
      real_ms: 100,
      written_ms: 113,
      at: world.clock.now(),
    });
  });

  it('redacts a token in an unrouted path, and notes the secrets sent in the URL and in another header', () => {
    const world = stageWorld();
    const ctx = stageContext(world, {
      path: `/v1/nowhere/${TOKEN}`,
      headers: { 'x-agent-identity': TOKEN, 'x-note': 'ak_known_api_key_0123456789' },
    });
    recordCall(world, ctx, 404, 0, 0);
    const [entry] = world.parts.journal.list();
    expect(entry?.operation).toBe('other');
    expect(entry?.path).not.toContain(TOKEN);
    expect(entry?.path).toContain('[REDACTED:');
    // The token in the URL is a secret placed where it does not belong, as is the key in x-note.
    expect(entry?.secrets_in).toEqual(['call URL', 'header x-note']);
  });

  it('reads the call URL and headers for secrets only when the entry is read, with the secrets known at the call', () => {
    const world = stageWorld({ journal: { body_bytes: 0 } });
    const { recorded, state } = keepingJournal();
    const ctx = stageContext(world, {
      path: '/v1/web/search',
      headers: {
        'x-agent-identity': TOKEN,
        'x-note': 'ak_known_api_key_0123456789',
        'x-plain': 'nothing here',
      },
    });
    recordCall({ config: world.config, state }, ctx, 200, 0, 0);
    const [{ entry, readings } = { entry: undefined }] = recorded;
    // Nothing read yet: the entry has no readings, the port holds the work.
    expect(entry?.secrets_in).toBeUndefined();
    expect(readings).toBeDefined();
    if (!entry) throw new Error('not recorded');
    readings?.apply(entry);
    expect(entry.secrets).toEqual(['api_key']);
    expect(entry.secrets_in).toEqual(['header x-note']);
  });

  it('hands the journal no readings when nothing sent could hold a secret', () => {
    const world = stageWorld({ journal: { body_bytes: 0 } });
    const { recorded, state } = keepingJournal();
    recordCall({ config: world.config, state }, stageContext(world, { path: '/v1' }), 404, 0, 0);
    expect(recorded[0]?.readings).toBeUndefined();
  });

  it('hands the journal a builder of the redacted exchange, which keeps body_bytes of each body', () => {
    const world = stageWorld({ journal: { body_bytes: 16 } });
    const { recorded, state } = keepingJournal();
    const body = JSON.stringify({ query: 'a long query that is cut' });
    const ctx = stageContext(world, { body, headers: { 'x-agent-identity': TOKEN } });
    ctx.requestBody = new TextEncoder().encode(body);
    const answer = { status: 200, headers: { 'x-echo': TOKEN }, body: '{"results":["one","two"]}' };
    recordCall({ config: world.config, state }, ctx, 200, 0, 0, answer);
    const exchange = recorded[0]?.exchange?.build();
    expect(exchange?.request_body).toBe(body.slice(0, 16));
    expect(exchange?.request_body_bytes).toBe(body.length);
    expect(exchange?.response_body).toBe(answer.body.slice(0, 16));
    expect(JSON.stringify(exchange)).not.toContain(TOKEN);
  });

  it('keeps no exchange when body_bytes is 0', () => {
    const world = stageWorld({ journal: { body_bytes: 0 } });
    const { recorded, state } = keepingJournal();
    const answer = { status: 200, headers: {}, body: '{}' };
    recordCall({ config: world.config, state }, stageContext(world), 200, 0, 0, answer);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.exchange).toBeUndefined();
  });
  it('redacts the exchange, when read, with the secrets known at the call (a key deleted since is still hidden)', () => {
    const world = stageWorld({ journal: { body_bytes: 64 } });
    let keys = [{ key: 'ak_deleted_later_0123456789', owner: 'agent-b' }];
    let version = 1;
    const services = {
      ...world.services,
      scanSecrets: createSecretScanner({ version: () => version, keys: () => keys, canaries: [] }),
    };
    const { recorded, state } = keepingJournal();
    const ctx = { ...stageContext(world), runtime: services };
    ctx.requestBody = new TextEncoder().encode('{"note":"ak_deleted_later_0123456789"}');
    const answer = { status: 200, headers: {}, body: '{}' };
    recordCall({ config: world.config, state }, ctx, 200, 0, 0, answer);
    keys = [];
    version = 2;
    const exchange = recorded[0]?.exchange?.build();
    expect(exchange?.request_body).toBe('{"note":"[REDACTED:api_key]"}');
  });
  it('reads a body over DEFERRED_BODY_BYTES at once: no entry waits for its reader holding a large body', () => {
    const world = stageWorld({ journal: { body_bytes: 0 } });
    const { recorded, state } = keepingJournal();
    const ctx = stageContext(world, { path: '/v1/web/search' });
    ctx.bodyTool = toolSpecOf(webSearch, {} as Parameters<typeof toolSpecOf>[1]) as BodyTool;
    ctx.requestBody = new TextEncoder().encode(
      JSON.stringify({
        query: 'weather',
        note: `ak_known_api_key_0123456789 ${'x'.repeat(DEFERRED_BODY_BYTES)}`,
      }),
    );
    recordCall({ config: world.config, state }, ctx, 200, 0, 0);
    expect(recorded[0]?.readings).toBeUndefined();
    expect(recorded[0]?.entry.secrets_in).toEqual(['body.note']);
    expect(recorded[0]?.entry.request_fingerprint).toBeDefined();
  });
});
