import { describe, expect, it } from 'vitest';
import { fc, test } from '../test/support/property.ts';
import { parseRetryAfter, retryAfterDelayMs } from './retry-after.ts';

describe('Retry-After (RFC 9110 §10.2.3)', () => {
  test.prop([fc.nat({ max: 10_000_000 })])('delay-seconds parse to themselves', (seconds) => {
    expect(parseRetryAfter(String(seconds))).toEqual({ kind: 'seconds', seconds });
  });

  test.prop([fc.integer({ min: 0, max: 4_000_000_000_000 })])(
    'IMF-fixdates (toUTCString) parse to their instant',
    (ms) => {
      const date = new Date(Math.floor(ms / 1000) * 1000);
      expect(parseRetryAfter(date.toUTCString())).toEqual({ kind: 'date', date: date.getTime() });
    },
  );

  it('accepts the obsolete RFC 850 and asctime forms, as recipients must', () => {
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT')).toEqual({
      kind: 'date',
      date: Date.UTC(1994, 10, 6, 8, 49, 37),
    });
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994')).toEqual({
      kind: 'date',
      date: Date.UTC(1994, 10, 6, 8, 49, 37),
    });
  });

  it.each([
    '1.5',
    '-1',
    '1s',
    '',
    ' ',
    'soon',
    '2026-11-21T01:00:00Z',
    'Sat, 21 Nov 2026 01:57:55',
    '0x10',
    '1e3',
  ])('refuses %j', (value) => {
    expect(parseRetryAfter(value)).toBeUndefined();
  });

  it('reads a date against the response Date header, so client clock skew does not matter', () => {
    const retry = { kind: 'date' as const, date: Date.parse('Sat, 21 Nov 2026 01:00:10 GMT') };
    expect(retryAfterDelayMs(retry, 'Sat, 21 Nov 2026 01:00:00 GMT', Date.parse('2030-01-01'))).toBe(10_000);
    expect(retryAfterDelayMs(retry, undefined, Date.parse('Sat, 21 Nov 2026 01:00:04 GMT'))).toBe(6000);
    expect(retryAfterDelayMs(retry, undefined, Date.parse('Sat, 21 Nov 2026 02:00:00 GMT'))).toBe(0);
    expect(retryAfterDelayMs({ kind: 'seconds', seconds: 3 }, undefined)).toBe(3000);
  });
});
