import fc from 'fast-check';
import type { RequestBody } from './request-body.ts';

/** Kinds of client mistake in a tool call's body. */
export type MalformedBodyKind = 'broken-json' | 'truncated' | 'wrong-type' | 'not-an-object' | 'not-json';

const BROKEN_JSON = [
  '{',
  '}',
  '{"query": }',
  '{query: "agent"}',
  "{'query': 'agent'}",
  '{"query": "agent",}',
  '{"query": "agent" "count": 2}',
  '{"query": NaN}',
  'undefined',
  '',
];

/** Values of other JSON types than `value`: what a client gets wrong when it builds a body by hand. */
function otherTypes(value: unknown): unknown[] {
  const candidates: unknown[] = [42, true, null, [], {}, 'text', [value]];
  const typeOf = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);
  return candidates.filter((c) => typeOf(c) !== typeOf(value));
}

/**
 * Bodies a valid, allowed caller might send by mistake, by kind, derived from the tool's configured
 * body (a JSON object): broken JSON, the configured body cut short, a field of the wrong JSON type, JSON
 * that is not an object, and the right JSON under a non-JSON content type.
 */
export function malformedBodies(configured: string): Record<MalformedBodyKind, fc.Arbitrary<RequestBody>> {
  const text = configured.trim();
  const object = JSON.parse(text) as Record<string, unknown>;
  const keys = Object.keys(object);
  const json = (body: string): RequestBody => ({ contentType: 'application/json', text: body });
  return {
    'broken-json': fc.constantFrom(...BROKEN_JSON).map(json),
    // A prefix of an object's text is never valid JSON: its closing brace is its last character.
    truncated: fc.noBias(fc.integer({ min: 1, max: text.length - 1 })).map((n) => json(text.slice(0, n))),
    'wrong-type':
      keys.length === 0
        ? fc.constantFrom('[]', '"text"', '42').map(json)
        : fc
            .constantFrom(...keys)
            .chain((key) =>
              fc
                .constantFrom(...otherTypes(object[key]))
                .map((wrong) => json(JSON.stringify({ ...object, [key]: wrong }))),
            ),
    'not-an-object': fc
      .constantFrom('[]', 'null', '"agent tool gateway"', '42', 'true', `[${text}]`)
      .map(json),
    'not-json': fc
      .constantFrom<string | undefined>(
        'text/plain',
        'application/x-www-form-urlencoded',
        'text/html',
        undefined,
      )
      .map((contentType) => ({ contentType, text })),
  };
}
