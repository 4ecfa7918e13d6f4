import { describe, expect, it } from 'vitest';
import { fc, test } from '../../test/support/property.ts';
import { loadConfig } from '../config/load-config.ts';
import { loadCorpus } from './corpus.ts';
import {
  createFixtureFetchProvider,
  fetchRequestSchema,
  markdownToText,
  truncate,
  UNTRUSTED_NOTICE,
} from './fetch-provider.ts';

const corpus = loadCorpus(loadConfig().corpus);
const provider = createFixtureFetchProvider(corpus, 1);
const fetchPage = (url: string, max_length = 100_000, format: 'markdown' | 'text' = 'markdown') =>
  provider.fetch({ url, max_length, format });

describe('fixture fetch provider', () => {
  it('marks every page as untrusted', async () => {
    const page = await fetchPage('https://docs.agent-gateway.example/welcome');
    expect(page).toMatchObject({ untrusted: true, notice: UNTRUSTED_NOTICE, source: 'fixture', status: 200 });
  });

  it('the same request gets the same frozen answer, equal to what a fresh provider answers', async () => {
    for (const url of ['https://docs.agent-gateway.example/welcome', 'https://unknown.example/a/b']) {
      const first = await fetchPage(url, 500, 'text');
      expect(Object.isFrozen(first)).toBe(true);
      expect(await fetchPage(url, 500, 'text')).toBe(first);
      expect(
        await createFixtureFetchProvider(corpus, 1).fetch({ url, max_length: 500, format: 'text' }),
      ).toEqual(first);
      // Another max_length or format is another answer.
      expect((await fetchPage(url, 400, 'text')).content).toBe(first.content.slice(0, 400));
      expect(await fetchPage(url, 500, 'markdown')).not.toBe(first);
    }
    // A large page is made again each time (the memo's memory stays bounded), the same answer.
    const huge = await fetchPage('https://archive.hostile.example/everything', 20_000);
    expect(Object.isFrozen(huge)).toBe(false);
    expect(await fetchPage('https://archive.hostile.example/everything', 20_000)).not.toBe(huge);
    expect(await fetchPage('https://archive.hostile.example/everything', 20_000)).toEqual(huge);
  });

  it('serves the hostile fixtures: prompt injection, canary secret, huge page, odd encodings', async () => {
    const injection = await fetchPage('https://blog.hostile.example/ai-news');
    expect(injection.content).toMatch(/ignore all previous instructions/i);
    expect(injection.content).toContain('exfil.canary.example');
    const canary = await fetchPage('https://pastebin.hostile.example/leaked-config');
    for (const secret of corpus.canarySecrets) expect(canary.content).toContain(secret);
    const huge = await fetchPage('https://archive.hostile.example/everything');
    expect(huge).toMatchObject({ length: 5_000_000, truncated: true });
    expect(huge.content).toHaveLength(100_000);
    const latin1 = await fetchPage('https://encoding.hostile.example/latin1');
    expect(latin1.content).toContain('Café, résumé, naïve, Ærøskøbing');
    expect(latin1.title).toBe('Café résumé (ISO-8859-1 page)');
    const unicode = await fetchPage('https://encoding.hostile.example/unicode');
    expect(unicode.content).toContain('\u202e');
    expect(unicode.content).toContain('\u0000');
    expect(JSON.parse(JSON.stringify(unicode))).toEqual(unicode);
  });

  it('finds fixture pages by normalised URL', async () => {
    expect((await fetchPage('HTTPS://DOCS.agent-gateway.example:443/welcome')).source).toBe('fixture');
  });

  test.prop([fc.webUrl({ validSchemes: ['http', 'https'] })])(
    'generates any other page deterministically',
    async (url) => {
      const first = await fetchPage(url);
      expect(await fetchPage(url)).toEqual(first);
      expect(first.source === 'generated' || corpus.pages.has(new URL(url).href)).toBe(true);
      expect(first.content.length).toBeGreaterThan(0);
    },
  );

  it('truncates to max_length and converts to text on request', async () => {
    const page = await fetchPage('https://docs.agent-gateway.example/welcome', 40, 'text');
    expect(page.content).toHaveLength(40);
    expect(page.truncated).toBe(true);
    expect(page.format).toBe('text');
    expect(page.content.startsWith('Welcome to the Agent Tool Gateway')).toBe(true);
  });

  it('request schema: only absolute http(s) URLs', () => {
    for (const url of ['ftp://x', 'javascript:alert(1)', '/relative', 'not a url']) {
      expect(fetchRequestSchema.safeParse({ url }).success).toBe(false);
    }
    expect(fetchRequestSchema.parse({ url: 'http://a.example' })).toEqual({
      url: 'http://a.example',
      max_length: 100_000,
      format: 'markdown',
    });
  });
});

describe('text helpers', () => {
  it('markdownToText removes markup and keeps link targets', () => {
    expect(markdownToText('# T\n\n**b** [x](http://y)\n* item')).toBe('T\n\nb x (http://y)\n- item');
  });

  it('truncate never splits a surrogate pair', () => {
    expect(truncate('a\u{1F916}b', 2)).toBe('a');
    expect(truncate('abc', 5)).toBe('abc');
  });
});
