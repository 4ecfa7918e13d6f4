/**
 * HTTP fuzzing of a running reference gateway, shared by the property test in `npm test`
 * (`test/http-fuzz.test.ts`) and `npm run fuzz` (`dev/fuzz.ts`): fast-check arbitraries of raw HTTP/1.1
 * requests (sent over a socket, byte for byte: bad methods, targets, versions, header bytes, framing,
 * compressed and truncated bodies, pipelining, half-closes, stalls) and of well-formed fetch requests, a
 * sender for each, and the property every answer must have:
 *
 * - it is a complete HTTP response (status line, headers, the body its Content-Length announces);
 * - no 5xx (no fault is armed in a fuzz run);
 * - an error (4xx) is JSON with a `code` from the catalogue whose status is the answer's, and its request id;
 * - every answer carries X-Request-Id and Date.
 *
 * Loopback only: the senders connect to the URL they are given, which callers start on 127.0.0.1.
 *
 * By job: fuzz-requests.ts (the arbitraries), fuzz-senders.ts (raw socket and fetch senders), fuzz-property.ts
 * (what every answer must be). This module is their one entry.
 */
export { answerViolation, outcomeViolations, showRequest } from './fuzz-property.ts';
export { type FetchRequest, fetchRequestArb, type RawRequest, rawRequestArb } from './fuzz-requests.ts';
export { type Answer, type Outcome, sendFetch, sendRaw } from './fuzz-senders.ts';
