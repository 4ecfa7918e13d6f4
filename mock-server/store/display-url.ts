/**
 * A Redis URL as it may be printed: without user name and password (redis://:pw@host keeps its password
 * out of logs and errors). Text that does not parse as a URL is cut at its last `@` the same way.
 *
 * @example
 * displayUrl('redis://:s3cret@10.0.0.5:6379/2'); // 'redis://10.0.0.5:6379/2'
 */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    const at = url.lastIndexOf('@');
    if (at < 0) return url;
    const scheme = url.indexOf('://');
    return scheme >= 0 && scheme < at ? `${url.slice(0, scheme + 3)}${url.slice(at + 1)}` : url.slice(at + 1);
  }
}
