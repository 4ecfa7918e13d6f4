import type { JournalOperation } from '../../vocabulary/endpoints.ts';
import type { ErrorCode } from '../../vocabulary/error-codes.ts';
import type { SecretKind } from '../secrets/secrets.ts';
import type { JournalExchange } from './exchange-capture.ts';

/*
 * What the journal remembers of one request (journal.ts keeps them, in a ring): its fields are the
 * vocabulary of the client report, the journal API, the HAR export and the proxy's findings.
 */

/**
 * An error code a gateway behind the proxy answered with: any string (at most 100 characters), which the
 * reference gateway's `ErrorCode` does not describe. Branded, so that only the proxy's reading of a target's
 * answer makes one.
 */
export type TargetErrorCode = string & { readonly __targetErrorCode: true };

/**
 * On a shared store, each instance's connection ids start at its number times this (`redis-journal.ts`), so
 * two instances' connections never merge and the instance of a connection is its id divided by this.
 */
export const CONNECTION_IDS_PER_INSTANCE = 2 ** 32;

/** One request as the journal remembers it. Secrets never appear: tokens are fingerprints, keys absent. */
export interface JournalEntry {
  /** Increases by one per recorded request; use it to page (`since`). */
  seq: number;
  request_id: string;
  /** Start, on the gateway clock (ms since the epoch), and as ISO text. */
  at: number;
  time: string;
  /**
   * The gateway clock's epoch at arrival: how many times it had been moved back (admin API, CLI, dashboard,
   * scenario load). Absent for 0. Time only moves forward within one epoch, so the client report never
   * compares requests of different epochs as reactions or waits.
   */
  epoch?: number;
  /** Real time the gateway took to build its answer. */
  duration_ms: number;
  /**
   * Real, monotonic arrival time in ms (process clock): for intervals and overlaps, whatever the gateway clock
   * does. With a shared store (several instances), on the epoch (`performance.timeOrigin` added), so the
   * times of different processes compare; connection ids are then numbered apart per instance.
   */
  real_ms: number;
  /**
   * When the answer was written to the client (or the connection dropped), on the same clock as `real_ms`,
   * as the adapter reports it: from then on the client can react to it. The gateway always records it;
   * journals written by hand (tests) may leave it out, and then `real_ms + duration_ms` stands for it.
   */
  written_ms?: number;
  /**
   * The connection the request came on (node:http adapter): an id unique for the server's lifetime, and when
   * it was opened (same clock as `real_ms`). Absent for msw and direct fetch calls, which have no connection.
   */
  connection?: number;
  connection_opened_ms?: number;
  /**
   * Which request this was on its connection (1 = the first), counted by the journal over every agent's
   * requests. An HTTP/1.1 client sends one request at a time per connection and opens a connection when it
   * has a request to send, so the first request was on its way from when the connection was opened.
   */
  connection_seq?: number;
  /**
   * In process (msw, direct fetch calls), which have no connection: how many answers the adapter had handed
   * back to its caller when this request was issued, and this request's answer's place in that order (1 =
   * the first). A request issued with `answers_seen >= r.answer_order` had `r`'s answer in hand. Counted per
   * gateway instance (`delivery_instance` tells instances apart on a shared store).
   */
  answers_seen?: number;
  answer_order?: number;
  delivery_instance?: number;
  /**
   * The turn of the gateway's event loop (node:http adapter; numbered per process) in which this request was
   * read, in which its connection was accepted, and in which its answer was written when that is known to be
   * in the loop's I/O phase (the gateway: answered in the turn it was read in; the proxy: written while it
   * read the target's answer). What was read or accepted in the turn an answer was written was sent before
   * that answer (the client report's reading of "sent together": `client-report/facts/causality.ts`).
   */
  read_turn?: number;
  opened_turn?: number;
  written_turn?: number;
  /**
   * The event loop's runs of stalls before it read this request (node:http and in process; per process):
   * [from, to, stalled, longest], `from` and `to` on the same clock as `real_ms`, oldest first; a run is the
   * stalls with no probe on time between them (the loop never caught up meanwhile), `stalled` the time they
   * lost in all and `longest` the longest one. Between an answer and a later request, they bound how much of
   * the time between them the machine may have added to the client's steps (adapters/node/loop-stall.ts;
   * client-report/facts/causality.ts `stallBetween`).
   */
  stall_runs?: [number, number, number, number][];
  method: string;
  path: string;
  /** The endpoint called (vocabulary/endpoints.ts: health, whoami, web.search, web.fetch, idp.*, openapi), or other. */
  operation: JournalOperation;
  /** HTTP status; 0 when the connection was dropped on purpose (fault). */
  status: number;
  /** The error code answered: the reference gateway's own, or in proxy mode whatever code the target sent. */
  code?: ErrorCode | TargetErrorCode;
  agent?: string;
  /**
   * How a request the identify stage did not name was tied to `agent`: by the token it carried (the health
   * check), by the agent's own API key it carried, by the known agent a token in this gateway's format names
   * though another secret signed it (`token_claim`: cached from an earlier run), or (set by the client report)
   * by its connection.
   */
  attributed_by?: 'token' | 'api_key' | 'token_claim' | 'connection';
  /** A fingerprint of the identity token (never the token). */
  token?: string;
  /** This agent's requests in flight when this one was admitted, itself included. */
  in_flight?: number;
  /** A fingerprint of what was asked (operation and body bytes), equal for identical requests. */
  request_fingerprint?: string;
  /**
   * A fingerprint of what the request means (operation and parsed body: the query's case, spacing and
   * punctuation, the URL's spelling, fields the gateway ignores do not count), equal for a retry that changed
   * only those. The client report recognises retries by it.
   */
  request_key?: string;
  retry_after?: string;
  retry_after_ms?: number;
  /** The rate-limit rule and scope key that refused the request. */
  limit?: { rule: string; scope: string; key: string };
  /**
   * Each rate-limit rule that counted the request (or would have, for a refused one): its scope key, its
   * limit, and the requests it had left once this one was decided (0 for the rule that refused it). The
   * dashboard plots each rule's state over time from these.
   */
  quota?: { rule: string; key: string; limit: number; remaining: number }[];
  fault?: string;
  /** Replay scenarios: the recorded answer that answered it, `<recorded agent>#<n>` (its n-th to the endpoint). */
  replay?: string;
  /** `stored`: a response was kept for its Idempotency-Key; `replayed`: answered from the store. */
  idempotency?: 'stored' | 'replayed';
  /** Search query or fetch URL, with detected secrets replaced by [REDACTED:<kind>]. */
  query?: string;
  url?: string;
  /** Kinds of secrets found in the query or URL (see the client report). */
  secrets?: SecretKind[];
  /** Kinds of secrets found only by joining this query or URL with the agent's previous one (split across two). */
  secrets_split?: SecretKind[];
  /**
   * Where the secrets were: `query` or `url` (the tool's field), `body.<field>` (another string of the body),
   * `call URL` (the path and query string of the call itself), `header <name>` (any header but the identity
   * header).
   */
  secrets_in?: string[];
  /**
   * Why the request's body could not be read (`http/sent-body.ts`: a content coding that does not decode, bytes
   * not valid in their charset, a multipart body without its boundary): what it carried was not scanned
   * (the client report's no-secrets-in-requests names it).
   */
  body_unread?: string;
  /**
   * Proxy mode: the agent's own API key was unknown to the proxy when this request was scanned, so a leak of
   * it could not be told as its own (the client report says its own-key check was not observed).
   */
  own_key_unknown?: true;
  /**
   * The exchange as seen on the wire, when the journal keeps bodies (`journal.body_bytes` > 0): headers with
   * the identity header, credentials and secrets redacted, and the first `body_bytes` of each body as text
   * (secrets redacted); `*_body_bytes` is the whole body's size. For the dashboard and HAR export.
   */
  exchange?: JournalExchange;
  /** Spec rules this answer breaks, as one answer can show (proxy mode: the target's answers). */
  findings?: { rule: string; detail: string }[];
  /** Proxy mode: the target's own request id (X-Request-Id of its answer), when it sent one. */
  target_request_id?: string;
}

/** What the pipeline stages learn about a request as it goes; recorded when the response is ready. */
export type JournalNote = Partial<
  Omit<JournalEntry, 'seq' | 'request_id' | 'at' | 'time' | 'duration_ms' | 'method' | 'path' | 'status'>
>;
