import { describe, expect } from 'vitest';
import { fc, test } from '../../test/support/property.ts';
import { malformedBodies } from './malformed-bodies.ts';

const configured = fc
  .dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.oneof(fc.string(), fc.integer(), fc.boolean()), {
    minKeys: 1,
    maxKeys: 4,
  })
  .map((object) => JSON.stringify(object));

const parses = (text: string | undefined) => {
  try {
    JSON.parse(text ?? '');
    return true;
  } catch {
    return false;
  }
};

describe('malformed bodies', () => {
  test.prop([configured, fc.nat()])('a truncated body is never valid JSON', (body, seed) => {
    const [sample] = fc.sample(malformedBodies(body).truncated, { seed, numRuns: 1 });
    expect(parses(sample?.text)).toBe(false);
  });

  test.prop([configured, fc.nat()])(
    'a wrong-typed body is the configured object with one field of another JSON type',
    (body, seed) => {
      const [sample] = fc.sample(malformedBodies(body)['wrong-type'], { seed, numRuns: 1 });
      const original = JSON.parse(body) as Record<string, unknown>;
      const wrong = JSON.parse(sample?.text ?? '') as Record<string, unknown>;
      const typeOf = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);
      const changed = Object.keys(original).filter((k) => typeOf(original[k]) !== typeOf(wrong[k]));
      expect(changed).toHaveLength(1);
    },
  );

  test.prop([configured, fc.nat()])(
    'broken JSON does not parse; non-JSON keeps the body under another type',
    (body, seed) => {
      const bodies = malformedBodies(body);
      const [broken] = fc.sample(bodies['broken-json'], { seed, numRuns: 1 });
      expect(parses(broken?.text)).toBe(false);
      const [notJson] = fc.sample(bodies['not-json'], { seed, numRuns: 1 });
      expect(notJson?.contentType ?? '').not.toMatch(/json/);
      expect(notJson?.text).toBe(body);
    },
  );
});
