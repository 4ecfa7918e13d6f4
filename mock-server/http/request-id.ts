import { randomUUID } from 'node:crypto';

// A caller-supplied id is echoed only when it is short and plain, so it cannot smuggle anything into logs.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id of a request: the caller's `X-Request-Id` (its value, given here) when it is safe to echo, else a fresh UUID. */
export function requestIdFor(given: string | undefined): string {
  return given !== undefined && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}
