import fc from 'fast-check';

/** A string field changed so the request differs but stays valid: a URL gets a query parameter, text a word. */
function vary(value: string, word: string): string {
  if (/^https?:\/\//i.test(value)) {
    try {
      const url = new URL(value);
      url.searchParams.set('variant', word);
      return url.href;
    } catch {
      // Not a URL after all: vary it as text.
    }
  }
  return `${value} ${word}`;
}

/**
 * The configured body (a JSON object) with every string field changed by a random word: another request
 * of the same shape, as a retry with other input would be.
 */
export const variedBody = (configured: string): fc.Arbitrary<string> =>
  fc.stringMatching(/^[a-z]{3,10}$/).map((word) => {
    const object = JSON.parse(configured) as Record<string, unknown>;
    const varied = Object.fromEntries(
      Object.entries(object).map(([key, value]) => [
        key,
        typeof value === 'string' ? vary(value, word) : value,
      ]),
    );
    return JSON.stringify(varied);
  });
