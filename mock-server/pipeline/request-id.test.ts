import { describe, expect, it } from 'vitest';
import { requestIdFor } from './request-id.ts';

describe('requestIdFor', () => {
  it('echoes a plain caller id and replaces anything else with a UUID', () => {
    expect(requestIdFor(new Headers({ 'x-request-id': 'abc-123.x:y' }))).toBe('abc-123.x:y');
    for (const given of ['has space', 'x'.repeat(129), 'new\u00e9line', '']) {
      const id = requestIdFor(new Headers(given ? { 'x-request-id': given } : {}));
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
