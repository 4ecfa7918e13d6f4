import { describe, expect, it } from 'vitest';
import { displayUrl } from './display-url.ts';

describe('displayUrl: a Redis URL as logs and errors may print it', () => {
  it('drops a password and a user name, keeping host, port and database', () => {
    expect(displayUrl('redis://:s3cret-pw@10.0.0.5:6379/2')).toBe('redis://10.0.0.5:6379/2');
    expect(displayUrl('rediss://gateway:s3cret-pw@cache.internal:6380')).toBe('rediss://cache.internal:6380');
    expect(displayUrl('redis://only-user@127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });

  it('leaves a URL without user info as it is', () => {
    expect(displayUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(displayUrl('memory')).toBe('memory');
  });

  it('cuts user info from text that is not a parseable URL too', () => {
    const shown = displayUrl('redis://:pw with space@[bad host');
    expect(shown).not.toContain('pw with space');
    expect(shown.startsWith('redis://')).toBe(true);
  });

  it('a password with an @ in it (percent-encoded or not) never shows', () => {
    for (const url of ['redis://:p%40ss@host:1', 'redis://:p@ss@host:1']) {
      const shown = displayUrl(url);
      expect(shown).not.toMatch(/p(%40|@)ss/);
      expect(shown).toContain('host:1');
    }
  });
});
