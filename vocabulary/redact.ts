/**
 * Report text comes partly from the gateway under test (codes, body excerpts): it must not carry the
 * caller's tokens into CI logs, nor terminal escape sequences into a terminal.
 */

// Runs of token-like characters; one that is part of a token (a truncated echo) or holds one is a token.
const TOKEN_RUN = /[A-Za-z0-9._~+/=-]{20,}/g;

/**
 * Replaces every run of 20+ token characters that is part of, or contains, one of `tokens`, or is one with
 * a character or two changed, by `[redacted token]`.
 *
 * @example
 * redactTokens('got code "agt1.abc…"', [token]); // 'got code "[redacted token]…"'
 */
export function redactTokens(text: string, tokens: readonly string[]): string {
  const known = tokens.filter((t) => t.length >= 20);
  if (known.length === 0) return text;
  return text.replace(TOKEN_RUN, (run) =>
    known.some((token) => token.includes(run) || run.includes(token) || nearly(run, token))
      ? '[redacted token]'
      : run,
  );
}

/** Whether `run` is `token` with a character or two changed, added or removed (an altered token echoed). */
function nearly(run: string, token: string): boolean {
  if (Math.abs(run.length - token.length) > 2) return false;
  let prefix = 0;
  while (prefix < run.length && prefix < token.length && run[prefix] === token[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < run.length - prefix &&
    suffix < token.length - prefix &&
    run[run.length - 1 - suffix] === token[token.length - 1 - suffix]
  )
    suffix++;
  return prefix + suffix >= Math.max(run.length, token.length) - 2;
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
