/**
 * Why an admin key cannot serve, or undefined when it can: one rule for `serve`, `proxy` and the library
 * (`createGateway`, `createProxy`). A key that no request could send would turn every admin call into a 401:
 * blank (empty or spaces only), spaces or tabs at either end (HTTP drops them from a header value, RFC 9110
 * section 5.5), or a control character (no header may carry it). The commands also refuse one shorter than
 * `minLength` (8), too easy to guess; the library leaves the length to its caller (`minLength` 0).
 *
 * @example
 * adminKeyProblem('        '); // 'The admin key is blank (empty or only spaces): ...'
 * adminKeyProblem('change-me-please'); // undefined
 */
export function adminKeyProblem(key: string, minLength = 8): string | undefined {
  if (key.trim() === '')
    return 'The admin key is blank (empty or only spaces): no request could send it, so every admin call would be refused. Give a key of 8 or more visible characters.';
  if (key.trim() !== key)
    return 'The admin key starts or ends with a space or tab, which HTTP drops from a header value: no request could send it. Give it without them.';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(key))
    return 'The admin key holds a control character, which no HTTP header may carry. Give a key of visible characters.';
  if (key.length < minLength) return `The admin key must be at least ${minLength} characters.`;
  return undefined;
}
