/**
 * Report text comes partly from the gateway under test (codes, body excerpts): it must not carry the
 * caller's tokens into CI logs, nor terminal escape sequences into a terminal.
 */

// Runs of token-like characters; one that is part of a token (a truncated echo) or holds one is a token.
const TOKEN_RUN = /[A-Za-z0-9._~+/=-]{20,}/g;

/**
 * Replaces every run of 20+ token characters that is part of, or contains, one of `tokens` by
 * `[redacted token]`.
 *
 * @example
 * redactTokens('got code "agt1.abc…"', [token]); // 'got code "[redacted token]…"'
 */
export function redactTokens(text: string, tokens: readonly string[]): string {
  const known = tokens.filter((t) => t.length >= 20);
  if (known.length === 0) return text;
  return text.replace(TOKEN_RUN, (run) =>
    known.some((token) => token.includes(run) || run.includes(token)) ? '[redacted token]' : run,
  );
}

// C0 and C1 controls (but tab and newline) and the bidirectional overrides that reorder a line on screen.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
export const UNPRINTABLE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Escapes characters that would drive the terminal (ANSI escapes) or reorder the line, as `\xNN`/`\uNNNN`.
 *
 * @example
 * printable('code "\x1b[2J"'); // 'code "\\x1b[2J"'
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
