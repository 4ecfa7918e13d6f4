import { describe, expect, it } from 'vitest';
import { fromWebRequest } from '../adapters/fetch.ts';
import { GatewayError } from '../errors.ts';
import type { CallContext, CallServices } from '../http/context.ts';
import type { Identity } from '../identity/identity-provider.ts';
import type { IdentityVerifier } from '../identity/verifier.ts';
import { identify, instructionPageUrl } from './identify.ts';

const identity: Identity = {
  agentId: 'a',
  name: 'A',
  tier: 'verified',
  allowlist: [],
  tokenId: 't',
  issuedAt: 0,
  expiresAt: 1,
};
const verifier: IdentityVerifier = {
  verify: (token) => (token === 'good' ? { ok: true, identity } : { ok: false, reason: 'expired' }),
};
const contextOf = (headers: Record<string, string>): CallContext => ({
  request: fromWebRequest(new Request('http://gw.test/v1/whoami', { headers })),
  runtime: {} as CallServices,
  requestId: 'r',
  note: {},
  at: 0,
  started: 0,
});
const call = async (headers: Record<string, string>) =>
  identify({ verifier, state: { refusal: () => undefined } }, contextOf(headers));
const failure = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('expected a 401');
};

describe('authenticate', () => {
  it('accepts a valid token in the header, whatever the header name case', async () => {
    expect(await call({ 'X-Agent-Identity': 'good' })).toBe(identity);
    expect(await call({ 'x-agent-identity': 'good' })).toBe(identity);
    expect(await call({ 'X-AGENT-IDENTITY': ' good ' })).toBe(identity);
  });

  it('401 missing_identity_token without the header or with an empty one, pointing at the instruction page', async () => {
    const cases: Record<string, string>[] = [
      {},
      { 'X-Agent-Identity': '' },
      { 'X-Agent-Identity': '   ' },
      { Authorization: 'Bearer good' },
    ];
    for (const headers of cases) {
      const error = await failure(call(headers));
      expect(error.code).toBe('missing_identity_token');
      expect(error.details.token_instructions).toBe(instructionPageUrl('http://gw.test'));
    }
  });

  it('401 invalid_identity_token with the reason when the verifier refuses', async () => {
    const error = await failure(call({ 'X-Agent-Identity': 'bad' }));
    expect(error.code).toBe('invalid_identity_token');
    expect(error.details.reason).toBe('expired');
    expect(error.message).toMatch(/obtain a fresh token/);
  });

  it('the instruction page URL carries app, endpoint and header', () => {
    const url = new URL(instructionPageUrl('http://127.0.0.1:8787'));
    expect(url.pathname).toBe('/idp/auth.md');
    expect(url.searchParams.get('endpoint')).toBe('http://127.0.0.1:8787/v1/whoami');
    expect(url.searchParams.get('header')).toBe('X-Agent-Identity');
    expect(url.searchParams.get('app')).toBeTruthy();
  });

  it('answers at once with an in-process verifier, and notes the fingerprint and agent, never the token', () => {
    const ctx = contextOf({ 'X-Agent-Identity': 'good' });
    const verified = identify({ verifier, state: { refusal: () => undefined } }, ctx);
    expect(verified).toBe(identity);
    expect(ctx.note.agent).toBe('a');
    expect(ctx.note.token).toBeDefined();
    expect(ctx.note.token).not.toContain('good');
  });

  it('judges no token while the state port refuses (a shared store holding another signing secret)', async () => {
    const conflict = new GatewayError('state_store_unavailable', { message: 'another secret' });
    let verified = 0;
    const counting: IdentityVerifier = {
      verify: (token) => {
        verified++;
        return verifier.verify(token);
      },
    };
    const ctx = contextOf({ 'X-Agent-Identity': 'good' });
    const error = await failure(
      (async () => identify({ verifier: counting, state: { refusal: () => conflict } }, ctx))(),
    );
    expect(error).toBe(conflict);
    expect(verified).toBe(0);
  });
});
