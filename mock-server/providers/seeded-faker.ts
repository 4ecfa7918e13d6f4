import { base, en, Faker, type Randomizer } from '@faker-js/faker';
import { fnv1a32 } from '../hash.ts';

/** A stable seed from any mix of strings and numbers. */
const seedFrom = fnv1a32;

/**
 * mulberry32: reseeding is one assignment. Faker's default Mersenne Twister costs ~20 us per seed, which
 * would dominate every generated tool result, because each request reseeds (that is what makes a retry
 * return the same body).
 */
function createMulberryRandomizer(): Randomizer {
  let state = 1;
  return {
    next() {
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
    seed(seed) {
      state = (Array.isArray(seed) ? seedFrom(...seed) : seed) | 0;
    },
  };
}

/**
 * A faker instance that is reseeded from the request before each generated result, so the same request
 * always yields the same body (spec section 4, rule 4: safe to retry).
 *
 * @example
 * const gen = createSeededFaker();
 * gen.reseed(1, 'search', 'llama recipes');
 * gen.faker.lorem.sentence(); // always the same sentence for that seed
 */
export function createSeededFaker() {
  const faker = new Faker({ locale: [en, base], randomizer: createMulberryRandomizer() });
  return {
    faker,
    reseed: (...parts: readonly (string | number)[]) => faker.seed(seedFrom(...parts)),
  };
}
