/**
 * Headers a replay never takes from a recording: framing (the replaying adapter writes its own) and the
 * recorded gateway's request id. The converter drops them with `Set-Cookie`; the replay stage also leaves the
 * recorded `Date` out (it is kept in the scenario to read an HTTP-date Retry-After against).
 */
export const FRAMING_AND_REQUEST_ID = [
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'content-encoding',
  'x-request-id',
] as const;
