import { describe, expect, it } from 'vitest';
import { fc, test } from '../../test/support/property.ts';
import { loadConfig } from '../config/load-config.ts';
import { loadCorpus } from './corpus.ts';
import { createFixtureSearchProvider, searchRequestSchema } from './search-provider.ts';

const corpus = loadCorpus(loadConfig().corpus);
const provider = createFixtureSearchProvider(corpus, 1);
const search = (query: string, count = 5) => provider.search({ query, count });

describe('fixture search provider', () => {
  it('answers a known query from the fixtures, whatever its case and spacing', async () => {
    const fixture = corpus.searches.get('agent tool gateway');
    const result = await search('  Agent   TOOL gateway ', 2);
    expect(result.source).toBe('fixture');
    expect(result.results).toEqual(fixture?.slice(0, 2));
  });

  test.prop([fc.string({ minLength: 1, maxLength: 80 }), fc.integer({ min: 1, max: 20 })])(
    'generates the same results for the same request (safe to retry), with the requested count',
    async (query, count) => {
      const first = await search(query, count);
      expect(await search(query, count)).toEqual(first);
      expect(first.results).toHaveLength(count);
      for (const hit of first.results) {
        expect(new URL(hit.url).hostname).toMatch(/\.example$/);
        expect(hit.title.length).toBeGreaterThan(0);
      }
    },
  );

  test.prop([fc.string({ minLength: 1, maxLength: 80 }), fc.integer({ min: 1, max: 20 })])(
    'the same request gets the same frozen answer, equal to what a fresh provider answers (a memo changes speed only)',
    async (query, count) => {
      const first = await search(query, count);
      expect(Object.isFrozen(first)).toBe(true);
      expect(await search(query, count)).toBe(first);
      expect(await createFixtureSearchProvider(corpus, 1).search({ query, count })).toEqual(first);
      // The query as sent is echoed: another spelling of the same query is another answer.
      const respelt = await search(` ${query}`, count);
      expect(respelt.query).toBe(` ${query}`);
    },
  );

  it('remembers a bounded number of answers, the oldest forgotten first', async () => {
    const fresh = createFixtureSearchProvider(corpus, 1);
    const first = await fresh.search({ query: 'memo 0', count: 2 });
    for (let i = 1; i <= 1024; i++) await fresh.search({ query: `memo ${i}`, count: 2 });
    const again = await fresh.search({ query: 'memo 0', count: 2 });
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  test.prop([fc.string({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 19 })])(
    'a smaller count is a prefix of a larger one',
    async (query, count) => {
      const few = await search(query, count);
      const more = await search(query, count + 1);
      expect(more.results.slice(0, count)).toEqual(few.results);
    },
  );

  it('different queries and different corpus seeds give different results', async () => {
    const a = await search('llama husbandry');
    expect((await search('quantum gardening')).results).not.toEqual(a.results);
    const reseeded = await createFixtureSearchProvider(corpus, 2).search({
      query: 'llama husbandry',
      count: 5,
    });
    expect(reseeded.results).not.toEqual(a.results);
  });

  it('the request schema trims the query, defaults count to 5 and names bad fields', () => {
    expect(searchRequestSchema.parse({ query: '  q ' })).toEqual({ query: 'q', count: 5 });
    const result = searchRequestSchema.safeParse({ query: '', count: 21 });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path[0])).toEqual(['query', 'count']);
  });
});

describe('generated-result cache', () => {
  it('results do not depend on the order or spelling in which queries were asked', async () => {
    const fresh = () => createFixtureSearchProvider(corpus, 7);
    const a = fresh();
    const upperFirst = [
      await a.search({ query: 'Llama Care', count: 3 }),
      await a.search({ query: 'llama care', count: 8 }),
    ];
    const b = fresh();
    const lowerFirst = [
      await b.search({ query: 'llama care', count: 8 }),
      await b.search({ query: 'Llama Care', count: 3 }),
    ];
    expect(upperFirst[0]?.results).toEqual(lowerFirst[1]?.results);
    expect(upperFirst[1]?.results).toEqual(lowerFirst[0]?.results);
  });
});
