import { z } from 'zod';
import { createBoundedMap } from '../bounded-map.ts';
import type { MaybePromise } from '../maybe-promise.ts';
import { mustBe } from '../validation.ts';
import { createAnswerMemo } from './answer-memo.ts';
import { type Corpus, normalizeQuery, type SearchHit } from './corpus.ts';
import { createSeededFaker } from './seeded-faker.ts';

/** Body of `POST /v1/web/search` (reference profile). Unknown fields are ignored. */
export const searchRequestSchema = z.object({
  query: z
    .string(mustBe('a string'))
    .trim()
    .min(1, 'must be a non-empty string')
    .max(500, 'must be at most 500 characters'),
  count: z
    .number(mustBe('a number'))
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(20, 'must be at most 20')
    .default(5),
});
export type SearchRequest = z.output<typeof searchRequestSchema>;

/** The answer of `POST /v1/web/search` (reference profile: the spec shows no body): one definition, the type inferred. */
export const searchResponseSchema = z.strictObject({
  query: z.string(),
  count: z.number().int(),
  results: z.array(z.strictObject({ title: z.string(), url: z.string(), snippet: z.string() })),
  source: z.enum(['fixture', 'generated']).describe('`fixture` from fixtures/, `generated` by seeded faker.'),
});
export type SearchResponse = z.output<typeof searchResponseSchema>;

/** Where search results come from: fixtures by default; a real backend can be plugged in. */
export interface SearchProvider {
  search(request: SearchRequest): MaybePromise<SearchResponse>;
}

const shorten = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Answers known queries from the fixture corpus and generates the rest deterministically: the seed comes
 * from the corpus seed and the normalised query only, and results are generated in order, so asking for
 * 3 results gives the first 3 of the 5 you would get with count 5. Generated lists are cached (bounded):
 * generation is deterministic, so the cache changes speed only, never a result. The same request (query as
 * sent, count) gets the same frozen answer, serialised once (`answer-memo.ts`).
 */
export function createFixtureSearchProvider(corpus: Corpus, seed: number): SearchProvider {
  const gen = createSeededFaker();
  const { faker } = gen;
  const generated = createBoundedMap<string, SearchHit[]>(2048);
  // A search answer is a few KB (20 results at most): 1,024 of them, text and bytes, are a few MB.
  const answers = createAnswerMemo<SearchResponse>(1024);

  // Depends on the normalised key only, so results never depend on which spelling was asked first.
  const generate = (key: string, count: number): SearchHit[] => {
    gen.reseed(seed, 'search', key);
    const topic = shorten(key, 60);
    return Array.from({ length: count }, () => {
      const host = `${faker.internet.domainWord()}.example`;
      const path = faker.helpers.slugify(faker.lorem.words({ min: 2, max: 4 }));
      return {
        title: `${capitalize(topic)}: ${faker.company.catchPhrase()}`,
        url: `https://${host}/${path}`,
        snippet: `${faker.lorem.sentence()} ${capitalize(topic)} ${faker.lorem.sentence().toLowerCase()}`,
      };
    });
  };

  const answer = (query: string, count: number): SearchResponse => {
    const key = normalizeQuery(query);
    const fixture = corpus.searches.get(key);
    if (fixture) return { query, count, results: fixture.slice(0, count), source: 'fixture' };
    let hits = generated.get(key);
    if (!hits || hits.length < count) {
      hits = generate(key, count);
      generated.set(key, hits);
    }
    return { query, count, results: hits.slice(0, count), source: 'generated' };
  };

  return {
    search: ({ query, count }) => answers(`${count}\u0000${query}`, () => answer(query, count)),
  };
}
