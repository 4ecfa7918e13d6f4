import { describe, expect, it } from 'vitest';
import { CapturedExchange, type ExchangeScan } from '../journal/packed-exchange.ts';
import { createExchangeSeal } from './redis-journal-exchange.ts';

const TOKEN = 'tok.header.payload-signature-0123456789';
const pieces = {
  requestHeaders: ['content-type', 'application/json', 'x-note', `sent ${TOKEN}`],
  query: 'q=1',
  requestBody: '{"query":"hello"}',
  requestBodyBytes: 17,
  responseHeaders: ['content-type', 'application/json'],
  responseBody: Buffer.from('{"results":[]}'),
  httpVersion: '1.1',
};
// The scan a reader redacts with: the caller's own token becomes [OWN].
const scan: ExchangeScan = (text, own) => ({
  redacted: own.token ? text.split(own.token).join('[OWN]') : text,
});
const captured = (more: Partial<typeof pieces> & { isCredential?: () => boolean } = {}) =>
  new CapturedExchange({ ...pieces, ...more }, 2048, scan, { token: TOKEN, agentId: 'agent-a' });

describe('exchanges sealed for the shared journal', () => {
  it('opens, on any instance with the same secret, to what redacting at once gives; nothing in clear', () => {
    const writer = createExchangeSeal(() => 'shared-secret-0123456789abcdef');
    const reader = createExchangeSeal(() => 'shared-secret-0123456789abcdef');
    const sealed = writer.seal(captured()) as string;
    const text = Buffer.from(sealed, 'base64').toString('latin1');
    for (const clear of [TOKEN, 'x-note', 'hello', 'results']) expect(text).not.toContain(clear);
    expect(reader.open(sealed, scan)).toEqual(captured().build());
    expect(JSON.stringify(reader.open(sealed, scan))).toContain('[OWN]');
    // Two seals of the same exchange differ (a nonce each).
    expect(writer.seal(captured())).not.toEqual(sealed);
  });

  it('does not open under another secret, nor when altered', () => {
    const sealed = createExchangeSeal(() => 'one-secret-0123456789abcdef').seal(captured()) as string;
    expect(createExchangeSeal(() => 'another-secret-0123456789ab').open(sealed, scan)).toBeUndefined();
    const bytes = Buffer.from(sealed, 'base64');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1;
    const same = createExchangeSeal(() => 'one-secret-0123456789abcdef');
    expect(same.open(bytes.toString('base64'), scan)).toBeUndefined();
    expect(same.open('not a seal', scan)).toBeUndefined();
  });

  it('still opens what it sealed after its secret changed (an adopted secret)', () => {
    let secret = 'drawn-here-0123456789abcdef';
    const seal = createExchangeSeal(() => secret);
    const sealed = seal.seal(captured()) as string;
    secret = 'adopted-older-0123456789abc';
    expect(seal.open(sealed, scan)).toEqual(captured().build());
  });

  it('leaves an exchange whose redaction cannot travel (its own credential names) to be redacted at once', () => {
    const seal = createExchangeSeal(() => 'shared-secret-0123456789abcdef');
    expect(seal.seal(captured({ isCredential: () => false }))).toBeUndefined();
  });
});
