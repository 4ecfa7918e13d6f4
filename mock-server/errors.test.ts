import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, ERROR_CODES, errorToResponse, GatewayError } from './errors.ts';

describe('error codes', () => {
  it('are snake_case and map the spec section 7 codes to their statuses', () => {
    for (const code of ERROR_CODES) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(ERROR_CATALOGUE.missing_identity_token.status).toBe(401);
    expect(ERROR_CATALOGUE.invalid_identity_token.status).toBe(401);
    expect(ERROR_CATALOGUE.access_denied.status).toBe(403);
    expect(ERROR_CATALOGUE.rate_limited.status).toBe(429);
  });

  it('a GatewayError answers JSON with code, message, details, request id and extra headers', async () => {
    const error = new GatewayError('rate_limited', {
      details: { scope: 'agent' },
      headers: { 'retry-after': '3' },
    });
    const response = error.toResponse('req-1');
    expect(response.status).toBe(429);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.json()).toEqual({
      code: 'rate_limited',
      message: ERROR_CATALOGUE.rate_limited.message,
      scope: 'agent',
      request_id: 'req-1',
    });
  });

  it('every 401 carries a WWW-Authenticate challenge (RFC 9110 section 11.6.1); other statuses none', () => {
    for (const code of ERROR_CODES) {
      const challenge = new GatewayError(code).toResponse().headers.get('www-authenticate');
      if (ERROR_CATALOGUE[code].status === 401) expect(challenge, code).toMatch(/^[A-Za-z]+ \S/);
      else expect(challenge, code).toBeNull();
    }
  });

  it('an unknown exception becomes one logged 500 internal_error that does not leak the exception', async () => {
    const lines: string[] = [];
    const response = errorToResponse(new TypeError('secret detail'), 'req-2', (line) => lines.push(line));
    expect(response.status).toBe(500);
    const body = (await response.json()) as { code: string };
    expect(body.code).toBe('internal_error');
    expect(JSON.stringify(body)).not.toContain('secret detail');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('secret detail');
    expect(lines[0]).toContain('req-2');
  });
});
