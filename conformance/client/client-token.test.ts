import { describe, expect, it } from 'vitest';
import type { SuiteRequest, SuiteResponse } from '../model/suite-request.ts';
import { staticToken } from '../tokens/token-source.ts';
import { materialiseToken, refusedRealToken, requestHeaders } from './client-token.ts';

const tokens = { valid: staticToken('secret-value', '$TOKEN') };
const VALID = { kind: 'derived', from: 'valid', transform: { op: 'none' } } as const;
const refusal = (code: string, status = 401): SuiteResponse => ({
  status,
  headers: {},
  text: '',
  json: { code },
});

describe('the suite client token handling', () => {
  it('a derived token is read from its source and redacted by its variable; a literal is sent as given', async () => {
    expect(await materialiseToken(tokens, { kind: 'literal', value: 'x' })).toEqual({ value: 'x' });
    const derived = await materialiseToken(tokens, VALID);
    expect(derived.value).toBe('secret-value');
    expect(derived.redacted?.variable).toBe('$TOKEN');
    await expect(materialiseToken({}, VALID)).rejects.toThrow('no valid token was given');
  });

  it('the headers carry the token; their reported copy names the variable, never the value', async () => {
    const request: SuiteRequest = {
      method: 'GET',
      path: '/v1/whoami',
      headers: { accept: 'x' },
      token: VALID,
    };
    const sent = await requestHeaders(tokens, request);
    expect(sent.sentValue).toBe('secret-value');
    expect(sent.headers).toEqual([
      ['accept', 'x'],
      ['X-Agent-Identity', 'secret-value'],
    ]);
    expect(JSON.stringify(sent.redactedHeaders)).not.toContain('secret-value');
    expect(sent.redactedHeaders[1]).toEqual(['X-Agent-Identity', '<$TOKEN>']);
    const bare = await requestHeaders(tokens, { method: 'GET', path: '/v1/health' });
    expect(bare).toEqual({
      headers: [],
      redactedHeaders: [],
      sentValue: undefined,
      tokenTransform: undefined,
    });
  });

  it('only a real, unaltered, unexpired token refused 401 invalid_identity_token is tried again, twice at most', () => {
    const request: SuiteRequest = { method: 'GET', path: '/v1/whoami', token: VALID };
    expect(refusedRealToken(request, refusal('invalid_identity_token'), 0, false)).toBe(true);
    expect(refusedRealToken(request, refusal('invalid_identity_token'), 2, false)).toBe(false);
    expect(refusedRealToken(request, refusal('invalid_identity_token'), 0, true)).toBe(false);
    expect(refusedRealToken(request, refusal('forbidden', 403), 0, false)).toBe(false);
    expect(refusedRealToken(request, refusal('missing_identity'), 0, false)).toBe(false);
    const expired = { ...request, token: { ...VALID, from: 'expired' } } as SuiteRequest;
    expect(refusedRealToken(expired, refusal('invalid_identity_token'), 0, false)).toBe(false);
    const literal = { ...request, token: { kind: 'literal', value: 'x' } } as SuiteRequest;
    expect(refusedRealToken(literal, refusal('invalid_identity_token'), 0, false)).toBe(false);
  });
});
