import { describe, expect, it } from 'vitest';
import { identityOf, stageContext, stageWorld } from '../../test/support/stage-context.ts';
import { journalFingerprint } from '../hash.ts';
import type { JournalNote } from '../journal/journal-entry.ts';
import { requestKey } from '../tools/request-meaning.ts';
import { webFetch } from '../tools/web-fetch.ts';
import { webSearch } from '../tools/web-search.ts';
import { entryReadings } from './entry-readings.ts';
import { readToolBody } from './read-tool-body.ts';
import { toolSpecOf } from './tool-spec.ts';

// The gateway's own search tool, as the pipeline runs it (its provider is not called here).
const search = toolSpecOf(webSearch, {} as Parameters<typeof toolSpecOf>[1]);

describe('read-body stage of a tool call', () => {
  it('leaves the query’s scan, the body’s fingerprint, meaning and other secrets for a reader', async () => {
    const world = stageWorld();
    const body = JSON.stringify({
      query: 'Weather ak_known_api_key_0123456789',
      count: 5,
      note: 'ak_known_api_key_0123456789',
    });
    const ctx = stageContext(world, { body, headers: { 'content-type': 'application/json' } });
    ctx.note.agent = 'agent-a';
    await readToolBody(ctx, identityOf('agent-a'), search);
    // What only a reader needs is not worked out yet: the record stage hands the journal its readings.
    expect(ctx.note.query).toBeUndefined();
    expect(ctx.note.request_key).toBeUndefined();
    const entry: JournalNote = { ...ctx.note };
    entryReadings(ctx)?.apply(entry);
    expect(entry.query).toBe('Weather [REDACTED:own_api_key]');
    expect(entry.request_fingerprint).toBe(journalFingerprint('web.search', new TextEncoder().encode(body)));
    expect(entry.request_key).toBe(
      requestKey(webSearch, { query: 'weather ak_known_api_key_0123456789', count: 5 }),
    );
    expect(entry.secrets_in).toEqual(['query', 'body.note']);
  });
  it('leaves the credentials by place in a URL for the entry’s first read: redacted before anyone sees it', async () => {
    const world = stageWorld();
    const fetchTool = toolSpecOf(webFetch, {} as Parameters<typeof toolSpecOf>[1]);
    const url = 'https://user:hunter22@example.com/page?api_key=plainsecret42&q=1';
    const ctx = stageContext(world, {
      path: '/v1/web/fetch',
      body: JSON.stringify({ url }),
      headers: { 'content-type': 'application/json' },
    });
    ctx.note.agent = 'agent-a';
    await readToolBody(ctx, identityOf('agent-a'), fetchTool);
    const entry: JournalNote = { ...ctx.note };
    entryReadings(ctx)?.apply(entry);
    expect(entry.url).toBe('https://user:[REDACTED]@example.com/page?api_key=[REDACTED]&q=1');
  });
});
