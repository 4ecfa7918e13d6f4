import { describe, expect, it } from 'vitest';
import { fc, test } from '../../test/support/property.ts';
import { createTokenCodec } from '../identity/token-codec.ts';
import { base32, rot13 } from '../text-encodings.ts';
import { createSecretScanner, type SecretKind } from './secrets.ts';

const codec = createTokenCodec('secrets-test-signing-secret');
const mint = (sub: string) =>
  codec.encode({ sub, jti: `jti-${sub}`, iss: 'idp', iat: 0, exp: 3_600_000, gen: 0 });
const OWN_TOKEN = mint('agent-early');
const [, OWN_PAYLOAD, OWN_SIGNATURE] = OWN_TOKEN.split('.') as [string, string, string];
const OTHER_TOKEN = mint('agent-verified');
const OTHER_UNPREFIXED = OTHER_TOKEN.slice('agt1.'.length);

const OWN_KEY = 'ak_early_7c3e9a1b5d2f';
const OTHER_KEY = 'ak_verified_2b8d4f6a1c9e';
// Space, reserved characters, a non-ASCII letter and a `%` that starts no escape: none is URI-safe.
const ODD_KEY = 'ak odd/kéy+=?&#%zz_2024';
const CANARY = 'CANARY-SECRET-3f9a2c7e1b5d';
const SK_CANARY = 'sk-canary-9d8e7f6a5b4c3d2e1f0a';

const scan = createSecretScanner({
  version: () => 1,
  keys: () => [
    { key: OWN_KEY, owner: 'agent-early' },
    { key: OTHER_KEY, owner: 'agent-verified' },
    { key: ODD_KEY, owner: 'agent-odd' },
  ],
  canaries: [CANARY, SK_CANARY],
});
/** What the gateway does for a request by agent-early carrying its token. */
const asEarly = (text: string) => scan(text, { token: OWN_TOKEN, agentId: 'agent-early' });

const hex = (byte: number) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
/** Every byte of the text percent-encoded, unreserved characters included. */
const encodeAll = (text: string) => [...new TextEncoder().encode(text)].map(hex).join('');
const encodeTwice = (text: string) => encodeAll(text).replaceAll('%', '%25');

/** The text as a server could read it: as is, percent-decoded (repeatedly), and with `+` as a space. */
function readingsOf(text: string): string[] {
  const found = [text];
  for (const start of [text, text.replaceAll('+', ' ')]) {
    let reading = start;
    for (let round = 0; round < 6; round++) {
      const decoded = reading.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
        try {
          return decodeURIComponent(run);
        } catch {
          return run;
        }
      });
      found.push(decoded);
      reading = decoded;
    }
  }
  return found;
}
const expectNoLeak = (stored: string, secret: string) => {
  for (const reading of readingsOf(stored)) expect(reading).not.toContain(secret);
};

describe('fixtures', () => {
  it('are real tokens whose signatures mix upper and lower case, as almost every signature does', () => {
    for (const token of [OWN_TOKEN, OTHER_TOKEN]) {
      expect(codec.decode(token).ok).toBe(true);
      expect(token).toMatch(/^agt1\.[A-Za-z0-9_-]{10,}\.(?=.*[A-Z])(?=.*[a-z])[A-Za-z0-9_-]{43}$/);
    }
  });
});

describe('the caller’s own identity token', () => {
  it.each([
    ['plain', `is this valid ${OWN_TOKEN} ?`],
    // `2E<payload>.<signature>` also has an identity token's shape: the token is still reported once.
    ['with only its first dot percent-encoded', `is this valid ${OWN_TOKEN.replace('.', '%2E')} ?`],
    ['with its dots percent-encoded', `is this valid ${OWN_TOKEN.replaceAll('.', '%2E')} ?`],
    ['with every character percent-encoded', `is this valid ${encodeAll(OWN_TOKEN)} ?`],
    ['in lower-case escapes', `is this valid ${encodeAll(OWN_TOKEN).toLowerCase()} ?`],
    ['percent-encoded twice', `is this valid ${encodeTwice(OWN_TOKEN)} ?`],
    ['without its agt1. prefix', `is this valid ${OWN_PAYLOAD}.${OWN_SIGNATURE} ?`],
    ['without its prefix, encoded', `is this valid ${encodeAll(`${OWN_PAYLOAD}.${OWN_SIGNATURE}`)} ?`],
    ['as its signature alone', `is this valid ${OWN_SIGNATURE} ?`],
    ['as its signature alone, encoded', `is this valid ${encodeAll(OWN_SIGNATURE)} ?`],
  ])('is found and redacted %s', (_, text) => {
    const result = asEarly(text);
    expect(result).toEqual({
      redacted: 'is this valid [REDACTED:own_identity_token] ?',
      kinds: ['own_identity_token'],
    });
    expectNoLeak(result.redacted, OWN_SIGNATURE);
  });

  it('is found in a fetch URL, the rest of the URL kept as sent', () => {
    expect(asEarly(`https://a.example/p%20q?t=${encodeAll(OWN_TOKEN)}&x=1+2`)).toEqual({
      redacted: 'https://a.example/p%20q?t=[REDACTED:own_identity_token]&x=1+2',
      kinds: ['own_identity_token'],
    });
  });

  it('is another agent’s token when someone else sends it', () => {
    expect(scan(OWN_TOKEN, { token: OTHER_TOKEN, agentId: 'agent-verified' }).kinds).toEqual([
      'identity_token',
    ]);
  });

  it('leaves the payload alone: it is readable claims, not a credential', () => {
    expect(asEarly(`claims ${OWN_PAYLOAD}`)).toEqual({ redacted: `claims ${OWN_PAYLOAD}`, kinds: [] });
  });
});

describe('another agent’s identity token', () => {
  it.each([
    ['plain', OTHER_TOKEN],
    ['without its agt1. prefix', OTHER_UNPREFIXED],
    ['percent-encoded', encodeAll(OTHER_TOKEN)],
    ['without its prefix, percent-encoded', encodeAll(OTHER_UNPREFIXED)],
    // Real payloads start with `eyJ` (base64 of `{"`), which the pre-filter knows; this one does not.
    ['without its prefix, of another payload', `Zm9yZ2VkLXBheWxvYWQ.${OTHER_TOKEN.slice(-43)}`],
  ])('is found by its shape %s', (_, form) => {
    const result = asEarly(`q=${form}&x=1`);
    expect(result).toEqual({ redacted: 'q=[REDACTED:identity_token]&x=1', kinds: ['identity_token'] });
    expectNoLeak(result.redacted, OTHER_TOKEN.slice(-43));
  });
});

describe('API keys', () => {
  it('reports the caller’s own key as own_api_key and another agent’s as api_key', () => {
    expect(asEarly(`keys ${OWN_KEY} and ${OTHER_KEY}`)).toEqual({
      redacted: 'keys [REDACTED:own_api_key] and [REDACTED:api_key]',
      kinds: ['own_api_key', 'api_key'],
    });
  });

  it.each([
    ['underscores percent-encoded', 'ak%5Fverified%5F2b8d4f6a1c9e'],
    ['in lower-case escapes', 'ak%5fverified%5f2b8d4f6a1c9e'],
    ['every character percent-encoded', encodeAll(OTHER_KEY)],
    ['percent-encoded twice', encodeTwice(OTHER_KEY)],
    ['partly encoded twice', 'ak%255Fverified%5F2b8d4f6a1c9e'],
  ])('finds another agent’s key with %s', (_, form) => {
    const result = asEarly(`https://keys.example/?k=${form}&n=2`);
    expect(result).toEqual({
      redacted: 'https://keys.example/?k=[REDACTED:api_key]&n=2',
      kinds: ['api_key'],
    });
    expectNoLeak(result.redacted, OTHER_KEY);
  });

  it.each([
    ['a stray % that starts no escape', '100%'],
    ['an invalid UTF-8 escape', '%FF%C3'],
  ])('finds a percent-encoded key after %s', (_, junk) => {
    expect(asEarly(`https://keys.example/?j=${junk}&k=ak%5Fverified%5F2b8d4f6a1c9e`)).toEqual({
      redacted: `https://keys.example/?j=${junk}&k=[REDACTED:api_key]`,
      kinds: ['api_key'],
    });
  });

  it.each([
    ['plain', ODD_KEY],
    ['encodeURIComponent', encodeURIComponent(ODD_KEY)],
    [
      'encodeURIComponent, lower-case escapes',
      encodeURIComponent(ODD_KEY).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
    ],
    ['encodeURI (reserved characters left as they are)', encodeURI(ODD_KEY)],
    ['form-encoded (space as +)', new URLSearchParams({ k: ODD_KEY }).toString().slice('k='.length)],
    ['every byte encoded', encodeAll(ODD_KEY)],
  ])('finds a key of characters that are not URI-safe, %s', (_, form) => {
    const result = asEarly(`https://keys.example/x?k=${form} then`);
    expect(result).toEqual({
      redacted: 'https://keys.example/x?k=[REDACTED:api_key] then',
      kinds: ['api_key'],
    });
    expectNoLeak(result.redacted, ODD_KEY);
  });

  it('tells each caller its own secrets when many callers take turns (each remembered apart)', () => {
    const asVerified = (text: string) => scan(text, { token: OTHER_TOKEN, agentId: 'agent-verified' });
    const text = `q=${OWN_SIGNATURE} k=${OWN_KEY} o=${OTHER_KEY}`;
    const early = asEarly(text);
    const verified = asVerified(text);
    for (let turn = 0; turn < 3; turn++) {
      expect(asEarly(text)).toEqual(early);
      expect(asVerified(text)).toEqual(verified);
    }
    expect(early.kinds).toEqual(expect.arrayContaining(['own_identity_token', 'own_api_key', 'api_key']));
    expect(verified.kinds).toContain('own_api_key');
    expect(verified.kinds).not.toContain('own_identity_token');
  });

  it('frozen(): scans later with the keys known when it was taken, not those registered since', () => {
    const keys = [{ key: 'ak_first_0123456789', owner: 'agent-first' }];
    let version = 1;
    const scanner = createSecretScanner({ version: () => version, keys: () => keys, canaries: [] });
    const atCall = scanner.frozen();
    keys.push({ key: 'ak_later_0123456789', owner: 'agent-later' });
    version = 2;
    const text = 'k=ak_first_0123456789&l=ak_later_0123456789';
    expect(atCall(text, {}).kinds).toEqual(['api_key']);
    expect(atCall(text, {}).redacted).toBe('k=[REDACTED:api_key]&l=ak_later_0123456789');
    expect(scanner(text, {}).redacted).toBe('k=[REDACTED:api_key]&l=[REDACTED:api_key]');
    expect(scanner.frozen()(text, {}).redacted).toBe('k=[REDACTED:api_key]&l=[REDACTED:api_key]');
  });

  it('redacts overlapping occurrences of a key as one', () => {
    const scanKey = createSecretScanner({
      version: () => 1,
      keys: () => [{ key: 'xyxyxyxy', owner: 'agent-x' }],
      canaries: [],
    });
    expect(scanKey('k=xyxyxyxyxy&n=1', {})).toEqual({
      redacted: 'k=[REDACTED:api_key]&n=1',
      kinds: ['api_key'],
    });
  });

  it('gathers the known keys again when, and only when, the registry changes', () => {
    let version = 1;
    let gathered = 0;
    const keys = [{ key: 'ak_first_0123456789', owner: 'agent-a' }];
    const scanRegistry = createSecretScanner({
      version: () => version,
      keys: () => {
        gathered++;
        return [...keys];
      },
      canaries: [],
    });
    expect(scanRegistry('k=ak_second_9876543210', {}).kinds).toEqual([]);
    keys.push({ key: 'ak_second_9876543210', owner: 'agent-b' });
    expect(scanRegistry('k=ak_second_9876543210', {}).kinds).toEqual([]);
    expect(gathered).toBe(1);
    version++;
    expect(scanRegistry('k=ak_second_9876543210', { agentId: 'agent-b' })).toEqual({
      redacted: 'k=[REDACTED:own_api_key]',
      kinds: ['own_api_key'],
    });
    expect(gathered).toBe(2);
  });
});

describe('API keys of thousands of agents', () => {
  // Many keys are looked up by their first characters, position by position, instead of one search each.
  const keys = Array.from({ length: 5000 }, (_, i) => ({
    key: `ak_fleet_${String(i).padStart(5, '0')}_${(i * 7919).toString(36)}x`,
    owner: `agent-${i}`,
  }));
  const scanFleet = createSecretScanner({
    version: () => 1,
    keys: () => keys,
    canaries: ['CANARY-abc-12345'],
  });
  const some = keys[4321] as { key: string; owner: string };
  const other = keys[17] as { key: string; owner: string };

  it('finds any one of them, plain, percent-encoded or encoded twice, and tells its owner', () => {
    expect(scanFleet(`k=${some.key}&j=${encodeTwice(other.key)}`, { agentId: some.owner })).toEqual({
      redacted: 'k=[REDACTED:own_api_key]&j=[REDACTED:api_key]',
      kinds: ['own_api_key', 'api_key'],
    });
    expect(scanFleet(`x ${encodeAll(other.key)} CANARY-abc-12345`, {})).toEqual({
      redacted: 'x [REDACTED:api_key] [REDACTED:canary_secret]',
      // The text as sent is read first (the canary), then decoded (the key).
      kinds: ['canary_secret', 'api_key'],
    });
  });

  it('leaves text that only shares a prefix with a key alone', () => {
    const near = some.key.slice(0, 12);
    expect(scanFleet(`q=${near} and ak_fleet_`, {})).toEqual({
      redacted: `q=${near} and ak_fleet_`,
      kinds: [],
    });
  });
});

describe('canaries', () => {
  it.each([
    ['plain', CANARY, CANARY],
    ['percent-encoded', encodeAll(CANARY), CANARY],
    ['with its dashes encoded', CANARY.replaceAll('-', '%2D'), CANARY],
    ['shaped like an sk- key', SK_CANARY, SK_CANARY],
  ])('are found %s', (_, form, canary) => {
    const result = asEarly(`https://keys.example/?k=${form}`);
    expect(result).toEqual({
      redacted: 'https://keys.example/?k=[REDACTED:canary_secret]',
      kinds: ['canary_secret'],
    });
    expectNoLeak(result.redacted, canary);
  });
});

describe('well-known secret shapes', () => {
  const SHAPES: [SecretKind, string][] = [
    ['aws_access_key', 'AKIAABCDEFGHIJKLMNOP'],
    ['aws_access_key', 'ASIAQRSTUVWXYZ234567'],
    ['github_token', `ghp_${'a1B2'.repeat(9)}`],
    ['openai_style_key', 'sk-proj-4fT9xQ2mLp8ZrV1bN6cW3yHd_k0'],
    ['openai_style_key', 'sk-ant-api03-Zx8vQ1wE5rT7yU2iO9pA4sD6fG3hJ0kL'],
    ['slack_token', 'xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx'],
    ['gitlab_token', 'glpat-x7Kq2Lm9Pz4Rt8Vw1Yb3'],
    ['google_api_key', 'AIzaSy9xQ2mLp8ZrV1bN6cW3yHd_k0T4fAe7Bu1'],
    ['stripe_key', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'],
    ['npm_token', `npm_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`],
    // An HS256 JWT ends in `<payload>.<43 characters>` like an identity token: it is reported as a JWT.
    [
      'jwt',
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
    ],
    ['private_key', '-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEAz3Xk9Vb2W1p8Q7r5T6y4U3i2O1pLkJhGfDsA'],
    ['private_key', '-----BEGIN PRIVATE KEY----- MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC'],
  ];

  it.each(SHAPES)('%s is found plain: %s', (kind, secret) => {
    expect(asEarly(`before ${secret} after`)).toEqual({
      redacted: `before [REDACTED:${kind}] after`,
      kinds: [kind],
    });
  });

  it.each(SHAPES)('%s is found percent-encoded: %s', (kind, secret) => {
    const result = asEarly(`https://a.example/?q=${encodeAll(secret)}&x=1`);
    expect(result).toEqual({ redacted: `https://a.example/?q=[REDACTED:${kind}]&x=1`, kinds: [kind] });
    expectNoLeak(result.redacted, secret);
  });

  it('a private key header is found form-encoded, spaces as +', () => {
    // No known secret holds a space here, so the text is not also read with `+` as a space.
    const scanShapes = createSecretScanner({ version: () => 1, keys: () => [], canaries: [] });
    const key = '-----BEGIN+RSA+PRIVATE+KEY-----+MIIEowIBAAKCAQEAz3Xk9Vb2W1p8Q7r5T6y4U3i2O1pLkJhGfDsA';
    expect(scanShapes(`https://a.example/?q=${key}&x=1`, {})).toEqual({
      redacted: 'https://a.example/?q=[REDACTED:private_key]&x=1',
      kinds: ['private_key'],
    });
  });

  it('reports every secret in a text, each once, in the order of its kind', () => {
    const result = asEarly(
      `${OWN_TOKEN} ${CANARY} AKIAABCDEFGHIJKLMNOP ${encodeAll(OTHER_KEY)} ${OWN_SIGNATURE}`,
    );
    expect(result).toEqual({
      redacted:
        '[REDACTED:own_identity_token] [REDACTED:canary_secret] [REDACTED:aws_access_key] [REDACTED:api_key] [REDACTED:own_identity_token]',
      kinds: ['own_identity_token', 'canary_secret', 'aws_access_key', 'api_key'],
    });
  });
});

describe('ordinary text', () => {
  it.each([
    'best pizza in new york',
    'c++ templates tutorial',
    '100% cotton t-shirts, 50%off and %zz',
    'https://example.com/search?q=hello%20world+again&lang=en&p=%E2%82%AC',
    'https://en.wikipedia.org/wiki/Pneumonoultramicroscopicsilicovolcanoconiosis_(word)',
    // Long words with a dot: a dot and 43 word characters, but not a signature (no mix of upper and lower case).
    'read documentation.pneumonoultramicroscopicsilicovolcanoconiosis-and-related-words today',
    'https://subdomain.a-very-long-host-name-label-that-goes-on-and-on-and-on.example/',
    'GENERAL-INFORMATION.PNEUMONOULTRAMICROSCOPICSILICOVOLCANOCONIOSIS_2024',
    'ASIA travel task-list ghp_ eyJ xoxo -----BEGIN PUBLIC KEY-----',
    // Shaped like keys, but words: a slug, a library, Slack's placeholder, an error message.
    'https://www.reuters.example/technology/sk-hynix-posts-record-quarterly-profit-2024-10-24/',
    'sk-learn-pipeline-tutorial-for-beginners',
    'where do I put xoxb-your-bot-token-here',
    'ssh says: invalid format -----BEGIN OPENSSH PRIVATE KEY----- what now',
    `agt1 tokens expire; prefix agt1.${OWN_PAYLOAD}`,
  ])('is left untouched: %s', (text) => {
    expect(asEarly(text)).toEqual({ redacted: text, kinds: [] });
  });

  // Lower-case words cannot hold a secret here: every known secret and shape needs a digit, an upper-case
  // letter, `_` or `-`. The separators include dots (long dotted words), escapes, a stray `%` and `+`.
  const word = fc.string({
    unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'),
    minLength: 1,
    maxLength: 60,
  });
  const separator = fc.constantFrom(' ', '.', '+', '/', '%', '%20', '%2E', '%2e', '?q=', '&');
  const ordinary = fc
    .array(fc.tuple(word, separator), { maxLength: 12 })
    .map((parts) => parts.map(([w, s]) => w + s).join(''));

  test.prop([ordinary])('random ordinary text passes through unchanged', (text) => {
    expect(asEarly(text)).toEqual({ redacted: text, kinds: [] });
  });

  // Each character of the secret raw, escaped (upper or lower case) or escaped twice.
  const escapeChar = (char: string, how: number) => {
    if (how === 0) return char;
    const once = encodeAll(char);
    return how === 1 ? once : how === 2 ? once.toLowerCase() : once.replaceAll('%', '%25');
  };
  const SECRETS: [string, SecretKind][] = [
    [OWN_TOKEN, 'own_identity_token'],
    [`${OWN_PAYLOAD}.${OWN_SIGNATURE}`, 'own_identity_token'],
    [OWN_SIGNATURE, 'own_identity_token'],
    [OTHER_TOKEN, 'identity_token'],
    [OWN_KEY, 'own_api_key'],
    [OTHER_KEY, 'api_key'],
    [ODD_KEY, 'api_key'],
    [CANARY, 'canary_secret'],
    ['AKIAABCDEFGHIJKLMNOP', 'aws_access_key'],
  ];

  test.prop([
    ordinary,
    fc.constantFrom(...SECRETS),
    fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 120, maxLength: 120 }),
    ordinary,
  ])(
    'a secret however its characters are escaped is redacted, and only it',
    (before, [secret, kind], hows, after) => {
      const sent = [...secret].map((char, i) => escapeChar(char, hows[i] as number)).join('');
      const result = asEarly(`${before} ${sent} ${after}`);
      expect(result).toEqual({ redacted: `${before} [REDACTED:${kind}] ${after}`, kinds: [kind] });
      expectNoLeak(result.redacted, secret);
    },
  );
});

describe('secrets sent encoded: base64, base64url, hex', () => {
  const encodings: [string, (text: string) => string][] = [
    ['base64', (text) => Buffer.from(text).toString('base64')],
    ['base64url', (text) => Buffer.from(text).toString('base64url')],
    ['hex', (text) => Buffer.from(text).toString('hex')],
    ['HEX', (text) => Buffer.from(text).toString('hex').toUpperCase()],
    ['base64, percent-encoded', (text) => encodeURIComponent(Buffer.from(text).toString('base64'))],
  ];
  const cases: [string, string, SecretKind][] = [
    ['its own token', OWN_TOKEN, 'own_identity_token'],
    ['its own API key', OWN_KEY, 'own_api_key'],
    ['another agent’s key', OTHER_KEY, 'api_key'],
    ['a canary', CANARY, 'canary_secret'],
    ['a canary with text around it', `key=${SK_CANARY}; check it`, 'canary_secret'],
    ['a well-known shape', 'AKIAABCDEFGHIJKLMNOP', 'aws_access_key'],
  ];
  for (const [encoding, encode] of encodings) {
    it.each(cases)(`finds %s ${encoding}, in a query and in a URL path or query`, (_, secret, kind) => {
      const sent = encode(secret);
      expect(asEarly(`is ${sent} valid`)).toEqual({ redacted: `is [REDACTED:${kind}] valid`, kinds: [kind] });
      expect(asEarly(`https://x.example/c/${sent}/go?n=1`)).toEqual({
        redacted: `https://x.example/c/[REDACTED:${kind}]/go?n=1`,
        kinds: [kind],
      });
      expect(asEarly(`https://x.example/?k=${sent}&n=1`).kinds).toEqual([kind]);
    });
  }

  it.each([
    ['a git commit', 'https://github.com/org/repo/commit/4b825dc642cb6eb9a060e54bf8d69288fbee4904'],
    ['a SHA-256', 'sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['a UUID', 'https://api.example/items/123e4567-e89b-12d3-a456-426614174000?v=2'],
    ['a long hex id', 'https://cdn.example/blob/0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c'],
    [
      'a base64url video id',
      'https://video.example/watch?v=dQw4w9WgXcQ&list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG',
    ],
    ['camel-case path segments', 'https://example.com/Articles/SomeTitleHereVeryLong/AnotherSegment2024'],
    ['base64 of ordinary text', `notes ${Buffer.from('meeting notes for tuesday').toString('base64')}`],
  ])('leaves %s alone', (_, text) => {
    expect(asEarly(text)).toEqual({ redacted: text, kinds: [] });
  });

  test.prop([fc.uint8Array({ minLength: 8, maxLength: 40 }), fc.constantFrom('hex', 'base64', 'base64url')])(
    'random bytes, however encoded, are not a secret',
    (bytes, encoding) => {
      const text = `https://a.example/${Buffer.from(bytes).toString(encoding as BufferEncoding)}`;
      expect(asEarly(text)).toEqual({ redacted: text, kinds: [] });
    },
  );
});

describe('pieces of the caller’s own secrets, and secrets split across two requests', () => {
  it.each([
    ['16 characters of its token’s signature', OWN_SIGNATURE.slice(10, 26), 'own_identity_token'],
    ['the last 20 characters of its own key', OWN_KEY.slice(-20), 'own_api_key'],
    ['16 characters of a canary', CANARY.slice(3, 19), 'canary_secret'],
  ])('finds %s', (_, piece, kind) => {
    expect(asEarly(`look up ${piece} please`)).toEqual({
      redacted: `look up [REDACTED:${kind}] please`,
      kinds: [kind],
    });
  });

  it('leaves shorter pieces, pieces of the readable payload, and other agents’ key pieces alone', () => {
    for (const text of [
      `look up ${OWN_SIGNATURE.slice(0, 15)}`,
      `claims ${OWN_PAYLOAD.slice(0, 30)}`,
      `look up ${OTHER_KEY.slice(0, 20)}`,
    ])
      expect(asEarly(text)).toEqual({ redacted: text, kinds: [] });
  });

  const outgoing = (scanner: typeof scan) => (text: string) =>
    scanner(text, { token: OWN_TOKEN, agentId: 'agent-early', outgoing: true });

  it.each([
    ['its own key, in order', OWN_KEY, 'own_api_key', true],
    ['its own key, end first', OWN_KEY, 'own_api_key', false],
    ['a canary', CANARY, 'canary_secret', true],
  ])('finds %s split across two consecutive queries', (_, secret, kind, inOrder) => {
    const fresh = createSecretScanner({
      version: () => 1,
      keys: () => [{ key: OWN_KEY, owner: 'agent-early' }],
      canaries: [CANARY],
    });
    const send = outgoing(fresh);
    const half = Math.floor(secret.length / 2);
    const [first, second] = inOrder
      ? [secret.slice(0, half), secret.slice(half)]
      : [secret.slice(half), secret.slice(0, half)];
    expect(send(`part one: ${first}`)).toEqual({ redacted: `part one: ${first}`, kinds: [] });
    expect(send(`part two: ${second}`)).toEqual({
      redacted: `part two: [REDACTED:${kind}]`,
      kinds: [kind],
      split: [kind],
    });
  });

  it('joins only consecutive outgoing texts of one agent; request ids and other agents do not count', () => {
    const fresh = createSecretScanner({
      version: () => 1,
      keys: () => [{ key: OWN_KEY, owner: 'agent-early' }],
      canaries: [],
    });
    const send = outgoing(fresh);
    const [first, second] = [OWN_KEY.slice(0, 10), OWN_KEY.slice(10)];
    send(`a ${first}`);
    send('weather in paris');
    expect(send(`b ${second}`).kinds).toEqual([]);
    send(`a ${first}`);
    fresh(`trace ${second}`, { token: OWN_TOKEN, agentId: 'agent-early' });
    fresh(`b ${second}`, { agentId: 'agent-other', outgoing: true });
    expect(send(`b ${second}`).split).toEqual(['own_api_key']);
  });

  // Texts two agents send out: halves and pieces of their keys and of a canary, encoded or not, and others.
  const SPLIT_KEY = 'ak_split_other_0f1e2d3c4b5a';
  const sentText = fc
    .tuple(
      fc.constantFrom(OWN_KEY, SPLIT_KEY, CANARY, 'weather in paris'),
      fc.nat({ max: 30 }),
      fc.nat({ max: 30 }),
      fc.boolean(),
    )
    .map(([secret, from, length, encoded]) => {
      const part = secret.slice(from, from + length);
      return `q ${encoded ? encodeAll(part) : part}`;
    });
  test.prop([
    fc.array(fc.tuple(fc.constantFrom('agent-early', 'agent-split'), sentText), { maxLength: 12 }),
    fc.boolean(),
  ])(
    'outgoing() on the path and frozen() later, in any order of reading, find what the scan at once finds',
    (sends, backwards) => {
      const source = {
        version: () => 1,
        keys: () => [
          { key: OWN_KEY, owner: 'agent-early' },
          { key: SPLIT_KEY, owner: 'agent-split' },
        ],
        canaries: [CANARY],
      };
      const atOnce = createSecretScanner(source);
      const deferred = createSecretScanner(source);
      const ownOf = (agentId: string) => ({
        token: agentId === 'agent-early' ? OWN_TOKEN : undefined,
        agentId,
        outgoing: true,
      });
      const expected = sends.map(([agent, text]) => atOnce(text, ownOf(agent)));
      // The path: the memory moves on in order; the scans are made later, here last first or first first.
      const left = sends.map(([agent, text]) => ({
        text,
        own: ownOf(agent),
        before: deferred.outgoing(text, ownOf(agent)),
        scan: deferred.frozen(),
      }));
      const order = left.map((_, k) => (backwards ? left.length - 1 - k : k));
      const read = new Array<unknown>(left.length);
      for (const k of order) {
        const { text, own, before, scan: later } = left[k] as (typeof left)[number];
        read[k] = later(text, own, before);
      }
      expect(read).toEqual(expected);
    },
  );
});

describe('a secret is the same secret in any case, base32 or rot13', () => {
  it.each([
    [
      'own token lower-cased (a host label)',
      `https://${OWN_SIGNATURE.toLowerCase()}.exfil.example/`,
      'own_identity_token',
    ],
    ['own token upper-cased', `q ${OWN_TOKEN.toUpperCase()}`, 'own_identity_token'],
    ['own key lower-cased in a host', `https://${OWN_KEY}.exfil.example/`, 'own_api_key'],
    ['canary lower-cased in a host', `https://${CANARY.toLowerCase()}.exfil.example/`, 'canary_secret'],
    [
      'canary base32, lower-cased in a host',
      `https://${base32(CANARY).toLowerCase()}.exfil.example/`,
      'canary_secret',
    ],
    ['own key base32', `q ${base32(OWN_KEY)}`, 'own_api_key'],
    ['own key base32 lower case', `q=${base32(OWN_KEY).toLowerCase()}`, 'own_api_key'],
    ['own token rot13: named as the agent’s own', `q ${rot13(OWN_TOKEN)}`, 'own_identity_token'],
    ['own key rot13', `q ${rot13(OWN_KEY)}`, 'own_api_key'],
    ['canary rot13, percent-encoded', `q=${encodeAll(rot13(CANARY))}`, 'canary_secret'],
    ['a piece of the own key lower-cased', `q ${OWN_KEY.slice(2).toUpperCase()}`, 'own_api_key'],
  ] as [string, string, SecretKind][])('%s', (_, text, kind) => {
    const result = asEarly(text);
    expect(result.kinds).toEqual([kind]);
    expect(result.redacted).toContain(`[REDACTED:${kind}]`);
  });

  it.each([
    'https://mfrggzdfmztwq2lknnwg23tpobyxe43uov3ho6dz.example/', // base32 of the alphabet: text, no secret
    'KRUGKIDROVUWG2ZAMJZG653OEBTG66BANJ2W24DTEBXXMZLSEB2GQZJANRQXU6JAMRXWO', // a sentence in base32
    'uryyb jbeyq naq nyy gur ercbegref', // rot13 prose
    'https://en.wikipedia.org/wiki/ABCDEFGHIJKLMNOPQRSTUVWXYZ234567',
  ])('leaves encoded text that holds no secret alone: %s', (text) => {
    expect(asEarly(text).kinds).toEqual([]);
  });
});
