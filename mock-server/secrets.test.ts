import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { scanForSecrets } from './secrets.ts';

const TOKEN = `agt1.${'eyJzdWIiOiJhIn0'}.${'A'.repeat(43)}`;

describe('secret scanner', () => {
  it('finds and redacts the caller’s token and API key, plain or URL-encoded', () => {
    const result = scanForSecrets(`q=${encodeURIComponent(TOKEN)} key ak_early_7c3e9a1b5d2f`, {
      ownToken: TOKEN,
      ownApiKey: 'ak_early_7c3e9a1b5d2f',
    });
    expect(result.kinds.sort()).toEqual(['own_api_key', 'own_identity_token']);
    expect(result.redacted).toBe('q=[REDACTED:own_identity_token] key [REDACTED:own_api_key]');
  });

  it('finds other agents’ API keys, canaries and well-known secret shapes', () => {
    const text = [
      'ak_verified_2b8d4f6a1c9e',
      'CANARY-SECRET-3f9a2c7e1b5d',
      'AKIAABCDEFGHIJKLMNOP',
      `ghp_${'a'.repeat(36)}`,
      'sk-live-abcdefghijklmnopqrstuv',
      'xoxb-1234567890-abcdef',
      'eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeKKF2QT4f',
      '-----BEGIN RSA PRIVATE KEY-----',
      TOKEN,
    ].join(' ');
    const result = scanForSecrets(text, {
      apiKeys: ['ak_verified_2b8d4f6a1c9e'],
      canaries: ['CANARY-SECRET-3f9a2c7e1b5d'],
    });
    expect(result.kinds.sort()).toEqual(
      [
        'api_key',
        'aws_access_key',
        'canary_secret',
        'github_token',
        'identity_token',
        'jwt',
        'openai_style_key',
        'private_key',
        'slack_token',
      ].sort(),
    );
    expect(result.redacted).not.toMatch(/ak_verified|CANARY|AKIA|ghp_|sk-live|xoxb|BEGIN RSA|agt1\./);
  });

  test.prop([fc.string({ maxLength: 200 })])('ordinary text passes through unchanged', (text) => {
    fc.pre(!/agt1\.|AKIA|ASIA|gh[pousr]_|sk-|xox|eyJ|-----BEGIN/.test(text));
    expect(scanForSecrets(text, { ownToken: TOKEN, canaries: ['CANARY-SECRET-3f9a2c7e1b5d'] })).toEqual({
      redacted: text,
      kinds: [],
    });
  });
});
