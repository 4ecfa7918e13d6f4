import { createHash } from 'node:crypto';
import { createBoundedMap } from './bounded-map.ts';
import { GatewayError } from './errors.ts';

/** A response kept for replay. */
export interface StoredResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

type Entry =
  | { state: 'in_progress'; fingerprint: string; expiresAt: number }
  | { state: 'done'; fingerprint: string; expiresAt: number; response: StoredResponse };

/** A new key (with, in a shared store, the entry's key to settle), or a stored response to replay. */
export type IdempotencyOutcome =
  | { kind: 'new'; storeKey?: string }
  | { kind: 'replay'; response: StoredResponse };

// sf-string (draft-ietf-httpapi-idempotency-key-header) or, as many APIs accept, the bare key.
const QUOTED = /^"([\x20-\x21\x23-\x5b\x5d-\x7e]{1,255})"$/;
const BARE = /^[\x21\x23-\x2b\x2d-\x7e]{1,255}$/;

/** Parses an Idempotency-Key header value; a malformed one is a 400 naming the header. */
export function parseIdempotencyKey(value: string): string {
  const key = QUOTED.exec(value)?.[1] ?? (BARE.test(value) ? value : undefined);
  if (key === undefined) {
    throw new GatewayError('invalid_request', {
      message:
        'Idempotency-Key: must be a quoted string ("...") or a plain token of 1-255 printable characters.',
      details: { field: 'Idempotency-Key' },
    });
  }
  return key;
}

/** What makes two requests "the same": method, path and exact body bytes. */
export function requestFingerprint(method: string, path: string, body: Uint8Array): string {
  return createHash('sha256').update(`${method} ${path}\n`).update(body).digest('base64url');
}

/**
 * Idempotency keys (reference profile, IETF draft-ietf-httpapi-idempotency-key-header), per agent: the same
 * key with the same request replays the stored response; with a different request it is 422
 * idempotency_key_reused; while the first is still running, 409 idempotency_key_in_use. Only successful
 * responses are stored, so a failed attempt can be retried under the same key. Keys expire on the clock.
 */
export function createIdempotencyStore(options: { ttlSeconds: number; maxKeys: number }) {
  let ttlMs = options.ttlSeconds * 1000;
  let entries = createBoundedMap<string, Entry>(options.maxKeys);
  const id = (agentId: string, key: string) => `${agentId}\u0000${key}`;

  return {
    begin(agentId: string, key: string, fingerprint: string, now: number): IdempotencyOutcome {
      const existing = entries.get(id(agentId, key));
      if (existing && existing.expiresAt > now) {
        if (existing.fingerprint !== fingerprint) {
          throw new GatewayError('idempotency_key_reused', {
            message:
              'This Idempotency-Key was already used with a different request: use a new key for a new request.',
            details: { idempotency_key: key },
          });
        }
        if (existing.state === 'in_progress') {
          throw new GatewayError('idempotency_key_in_use', {
            message:
              'A request with this Idempotency-Key is still being processed: retry once it has finished.',
            details: { idempotency_key: key },
          });
        }
        return { kind: 'replay', response: existing.response };
      }
      entries.set(id(agentId, key), { state: 'in_progress', fingerprint, expiresAt: now + ttlMs });
      return { kind: 'new' };
    },

    /** Stores a successful response for replay, or releases the key after a failure. */
    finish(
      agentId: string,
      key: string,
      fingerprint: string,
      now: number,
      response: StoredResponse | undefined,
    ) {
      if (!response) {
        entries.delete(id(agentId, key));
        return;
      }
      entries.set(id(agentId, key), { state: 'done', fingerprint, expiresAt: now + ttlMs, response });
    },

    configure(next: { ttlSeconds: number; maxKeys: number }) {
      ttlMs = next.ttlSeconds * 1000;
      entries = createBoundedMap(next.maxKeys);
    },
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
