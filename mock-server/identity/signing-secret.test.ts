import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load-config.ts';
import { createGateway } from '../gateway.ts';
import {
  isLoopbackHost,
  PUBLIC_SIGNING_SECRETS,
  processSigningSecret,
  publicSecretRefusal,
  signingSecretProblem,
} from './signing-secret.ts';
import { createTokenCodec } from './token-codec.ts';

const PUBLIC = PUBLIC_SIGNING_SECRETS[0] as string;

describe('signing secrets', () => {
  it('the bundled config sets none: each process signs with 32 random bytes of its own', () => {
    expect(loadConfig().identity.signing_secret).toBeUndefined();
    expect(processSigningSecret()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(processSigningSecret()).toBe(processSigningSecret());
  });

  it('a token forged with the formerly bundled public secret is refused by a default gateway', () => {
    const gateway = createGateway();
    const now = gateway.clock.now();
    const forged = createTokenCodec(PUBLIC).encode({
      sub: 'agent-verified',
      jti: 'forged',
      iss: 'agent-gateway-idp',
      iat: now,
      exp: now + 60_000,
      gen: 0,
    });
    expect(gateway.idp.verify(forged)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('gateways of one process share its secret, so tokens survive a reset and a scenario change', () => {
    const minter = createGateway();
    const token = minter.mintToken('agent-verified');
    expect(createGateway().idp.verify(token).ok).toBe(true);
    minter.reset();
    expect(minter.idp.verify(token).ok).toBe(true);
    const configured = createGateway({ config: { identity: { signing_secret: 'x'.repeat(32) } } });
    expect(configured.idp.verify(token)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('public and short secrets are named; a long private one, or none (random), is fine', () => {
    expect(signingSecretProblem(PUBLIC)).toBe('public');
    expect(signingSecretProblem('our-secret-changeme-before-release-0123')).toBe('public');
    expect(signingSecretProblem('sixteen-chars-ok')).toBe('short');
    expect(signingSecretProblem('k'.repeat(31))).toBe('short');
    expect(signingSecretProblem('k'.repeat(32))).toBeUndefined();
    expect(signingSecretProblem(undefined)).toBeUndefined();
  });

  it('loopback hosts are only 127.0.0.0/8, ::1 and localhost', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1'])
      expect([host, isLoopbackHost(host)]).toEqual([host, true]);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'example.com', '::ffff:10.0.0.1'])
      expect([host, isLoopbackHost(host)]).toEqual([host, false]);
  });

  it('listening beyond loopback with a public secret is refused unless forced', () => {
    expect(publicSecretRefusal(PUBLIC, '0.0.0.0', false)).toMatch(/--allow-public-secret/);
    expect(publicSecretRefusal(PUBLIC, '::', false)).toMatch(/Refusing to listen on ::/);
    expect(publicSecretRefusal(PUBLIC, '0.0.0.0', true)).toBeUndefined();
    expect(publicSecretRefusal(PUBLIC, '127.0.0.1', false)).toBeUndefined();
    expect(publicSecretRefusal('sixteen-chars-ok', '0.0.0.0', false)).toBeUndefined();
    expect(publicSecretRefusal(undefined, '0.0.0.0', false)).toBeUndefined();
  });
});
