import { describe, expect, it } from 'vitest';
import { citedPlaces, formatSpecRef, primarySection } from './spec-ref.ts';

describe('spec references', () => {
  it('format as the prose reports have always printed', () => {
    expect(formatSpecRef([{ section: 5, rules: [3] }, { section: 7 }])).toBe('§5 rule 3, §7');
    expect(formatSpecRef([{ section: 5, rules: [3, 4] }])).toBe('§5 rules 3-4');
    expect(formatSpecRef([{ section: 4, rules: [1, 3] }])).toBe('§4 rules 1 and 3');
    expect(
      formatSpecRef([
        { section: 4, rules: [2] },
        { section: 5, rules: [2, 4] },
      ]),
    ).toBe('§4 rule 2, §5 rules 2 and 4');
    expect(formatSpecRef([{ section: 5, rules: [2], note: 'RFC 9110 §5.1' }])).toBe(
      '§5 rule 2 (RFC 9110 §5.1)',
    );
    expect(formatSpecRef([{ section: 7, note: '429: honor Retry-After' }, { section: 8 }])).toBe(
      '§7 (429: honor Retry-After), §8',
    );
    expect(formatSpecRef([{ section: 1, rules: [5, 1, 3, 2] }])).toBe('§1 rules 1-3 and 5');
    expect(formatSpecRef([{ section: 1, rules: [1, 3, 5] }])).toBe('§1 rules 1, 3 and 5');
  });

  it('are filed under their first citation', () => {
    expect(primarySection([{ section: 8 }, { section: 7 }])).toBe(8);
    expect(primarySection([{ section: 3 }, { section: 5, rules: [4] }])).toBe(3);
  });

  it('cite one place per numbered rule, or the section, and never what a note names', () => {
    expect(citedPlaces([{ section: 5, rules: [3, 4] }])).toEqual(['§5 rule 3', '§5 rule 4']);
    expect(citedPlaces([{ section: 5, rules: [2], note: 'RFC 9110 §5.1' }])).toEqual(['§5 rule 2']);
    expect(citedPlaces([{ section: 7, note: '429 remedy' }, { section: 8 }])).toEqual(['§7', '§8']);
    expect(
      citedPlaces([
        { section: 4, rules: [2] },
        { section: 5, rules: [2, 4] },
      ]),
    ).toEqual(['§4 rule 2', '§5 rule 2', '§5 rule 4']);
  });
});
