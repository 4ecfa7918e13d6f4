import { describe, expect, it } from 'vitest';
import { ERROR_STATUSES } from '../vocabulary/error-codes.ts';
import { ERROR_CATALOGUE, ERROR_CODES, type ErrorCode, GatewayError } from './errors.ts';

describe('error codes', () => {
  it('are snake_case and map the spec section 7 codes to their statuses', () => {
    for (const code of ERROR_CODES) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(ERROR_CATALOGUE.missing_identity_token.status).toBe(401);
    expect(ERROR_CATALOGUE.invalid_identity_token.status).toBe(401);
    expect(ERROR_CATALOGUE.access_denied.status).toBe(403);
    expect(ERROR_CATALOGUE.rate_limited.status).toBe(429);
  });

  it('every 401 carries a WWW-Authenticate challenge (RFC 9110 section 11.6.1); other statuses none', () => {
    for (const code of ERROR_CODES) {
      const challenge = new GatewayError(code).headers['www-authenticate'];
      if (ERROR_CATALOGUE[code].status === 401) expect(challenge, code).toMatch(/^[A-Za-z]+ \S/);
      else expect(challenge, code).toBeUndefined();
    }
  });
});

describe('the catalogue and the spec vocabulary', () => {
  it('has a message for every code of vocabulary/error-codes.ts, and no code the vocabulary lacks', () => {
    expect(Object.keys(ERROR_CATALOGUE)).toEqual(Object.keys(ERROR_STATUSES));
    for (const code of Object.keys(ERROR_STATUSES) as ErrorCode[]) {
      expect(ERROR_CATALOGUE[code].message, code).toMatch(/\S/);
      expect(ERROR_CATALOGUE[code].status, code).toBe(ERROR_STATUSES[code]);
      expect(new GatewayError(code).status, code).toBe(ERROR_STATUSES[code]);
    }
  });
});
