import { describe, expect, it } from 'vitest';
import { codeOf } from '../test/support/gateway-error.ts';
import { GatewayError } from './errors.ts';
import { createIdempotencyStore, parseIdempotencyKey, requestFingerprint } from './idempotency.ts';

const response = { status: 200, body: '{"ok":true}', headers: {} };

describe('idempotency store', () => {
  it('replays a stored response for the same key and request, per agent', () => {
    const store = createIdempotencyStore({ ttlSeconds: 60, maxKeys: 10 });
    expect(store.begin('a', 'k', 'fp', 0)).toEqual({ kind: 'new' });
    store.finish('a', 'k', 'fp', 1, response);
    expect(store.begin('a', 'k', 'fp', 2)).toEqual({ kind: 'replay', response });
    expect(store.begin('b', 'k', 'fp', 2)).toEqual({ kind: 'new' });
  });

  it('refuses another request under a used key (422) and a key still in progress (409)', () => {
    const store = createIdempotencyStore({ ttlSeconds: 60, maxKeys: 10 });
    store.begin('a', 'k', 'fp', 0);
    expect(codeOf(() => store.begin('a', 'k', 'fp', 0))).toBe('idempotency_key_in_use');
    expect(codeOf(() => store.begin('a', 'k', 'other', 0))).toBe('idempotency_key_reused');
    expect(new GatewayError('idempotency_key_reused').status).toBe(422);
  });

  it('a failed attempt releases the key; keys expire on the clock', () => {
    const store = createIdempotencyStore({ ttlSeconds: 60, maxKeys: 10 });
    store.begin('a', 'k', 'fp', 0);
    store.finish('a', 'k', 'fp', 0, undefined);
    expect(store.begin('a', 'k', 'other', 1)).toEqual({ kind: 'new' });
    store.finish('a', 'k', 'other', 1, response);
    // Stored at 1 ms with a 60 s lifetime: still in force at 60 000 ms, forgotten from 60 001 ms.
    expect(codeOf(() => store.begin('a', 'k', 'third', 60_000))).toBe('idempotency_key_reused');
    expect(store.begin('a', 'k', 'third', 60_001)).toEqual({ kind: 'new' });
  });
});

describe('Idempotency-Key header', () => {
  it('accepts an sf-string or a bare token; refuses the rest with 400 naming the header', () => {
    expect(parseIdempotencyKey('"8e03978e-40d5-43e8"')).toBe('8e03978e-40d5-43e8');
    expect(parseIdempotencyKey('abc_123')).toBe('abc_123');
    for (const bad of ['', '"unterminated', 'has space', 'x'.repeat(256), '"a"b"']) {
      expect(codeOf(() => parseIdempotencyKey(bad))).toBe('invalid_request');
    }
  });

  it('the fingerprint changes with method, path or any body byte', () => {
    const body = new TextEncoder().encode('{"query":"a"}');
    const fp = requestFingerprint('POST', '/v1/web/search', body);
    expect(requestFingerprint('POST', '/v1/web/search', body)).toBe(fp);
    expect(requestFingerprint('POST', '/v1/web/fetch', body)).not.toBe(fp);
    expect(requestFingerprint('POST', '/v1/web/search', new TextEncoder().encode('{"query":"b"}'))).not.toBe(
      fp,
    );
  });
});
