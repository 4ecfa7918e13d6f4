import { describe, expect, it } from 'vitest';
import { requestIdFor } from './request-id.ts';

describe('requestIdFor', () => {
  it('echoes a plain caller id and replaces anything else with a UUID', () => {
    expect(requestIdFor('abc-123.x:y')).toBe('abc-123.x:y');
    for (const given of ['has space', 'x'.repeat(129), 'new\u00e9line', '', undefined]) {
      expect(requestIdFor(given)).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
