import fc from 'fast-check';

/** A body as sent: content type (or none) and text. */
export interface RequestBody {
  contentType?: string;
  text?: string;
}

/**
 * Any body a caller might send, valid or not: JSON objects, other JSON, broken JSON, text, nothing. Kept
 * under 4 KB so no server-level size limit can fairly answer before authentication.
 */
export const requestBody = (): fc.Arbitrary<RequestBody> =>
  fc.oneof(
    fc.constant<RequestBody>({}),
    fc.record({
      contentType: fc.constant('application/json'),
      text: fc.json({ maxDepth: 3 }).filter((t) => t.length < 4000),
    }),
    fc.record({
      contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
      text: fc.string({ maxLength: 300 }),
    }),
    fc.record({
      contentType: fc.constant('application/json'),
      text: fc.constantFrom('{', '{"query":', '[]', 'null', '""', '{"query":"x"}'),
    }),
  );
