import type { JournalOperation } from '../../spec/endpoints.ts';
import type { ErrorCode } from '../../spec/error-codes.ts';
import { createBoundedMap } from '../bounded-map.ts';
import type { SecretKind } from '../secrets/secrets.ts';
import { type JournalExchange, settleExchange } from './exchange-capture.ts';

/** One request as the journal remembers it. Secrets never appear: tokens are fingerprints, keys absent. */
export type { JournalExchange };

/**
 * An error code a gateway behind the proxy answered with: any string (at most 100 characters), which the
 * reference gateway's `ErrorCode` does not describe. Branded, so that only the proxy's reading of a target's
 * answer makes one.
 */
export type TargetErrorCode = string & { readonly __targetErrorCode: true };

export interface JournalEntry {
  /** Increases by one per recorded request; use it to page (`since`). */
  seq: number;
  request_id: string;
  /** Start, on the gateway clock (ms since the epoch), and as ISO text. */
  at: number;
  time: string;
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
  method: string;
  path: string;
  /** The endpoint called (spec/endpoints.ts: health, whoami, web.search, web.fetch, idp.*, openapi), or other. */
  operation: JournalOperation;
  /** HTTP status; 0 when the connection was dropped on purpose (fault). */
  status: number;
  /** The error code answered: the reference gateway's own, or in proxy mode whatever code the target sent. */
  code?: ErrorCode | TargetErrorCode;
  agent?: string;
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

/**
 * The most entries one page of the journal API holds (GET /__admin/journal): a page is serialised in one go,
 * so this bounds how long it holds the event loop and how much memory it takes, whatever the capacity.
 */
export const MAX_JOURNAL_PAGE = 1000;

/** What the journal API asks for: an agent's entries, those after `since`, the newest `limit` of them. */
export interface JournalFilter {
  agent?: string;
  since?: number;
  limit?: number;
}

/**
 * One page of the journal. `more`: entries after `next_since` may match (ask again with
 * `since=next_since`); `next_since`: the seq to page on from (the last entry looked at).
 */
export interface JournalPageOf<E = JournalEntry> {
  capacity: number;
  dropped: number;
  entries: E[];
  more: boolean;
  next_since: number;
}

// Connections whose requests are counted (`connection_seq`); the oldest are forgotten beyond it.
export const CONNECTIONS_COUNTED = 16_384;

/**
 * The request journal: a ring of the most recent `capacity` entries, so memory stays bounded however long
 * the gateway runs.
 */
export function createJournal(initialCapacity: number) {
  let capacity = initialCapacity;
  let ring: (JournalEntry | undefined)[] = new Array(capacity);
  let next = 0;
  let seq = 0;
  let dropped = 0;
  // Requests seen per connection id, bounded. Not cleared with the journal: a connection outlives a reset,
  // and its next request is not its first.
  const perConnection = createBoundedMap<number, number>(CONNECTIONS_COUNTED);

  return {
    /**
     * Records a finished request, taking the object over (it is not copied); `time` is derived from `at`
     * when listed, keeping this cheap.
     */
    record(fields: Omit<JournalEntry, 'seq' | 'time'>): void {
      const entry = fields as JournalEntry;
      entry.seq = ++seq;
      entry.time = '';
      if (entry.connection !== undefined) {
        const count = (perConnection.get(entry.connection) ?? 0) + 1;
        perConnection.set(entry.connection, count);
        entry.connection_seq = count;
      }
      if (ring[next]) dropped += 1;
      ring[next] = entry;
      next = (next + 1) % capacity;
    },

    /** Entries in recording order, oldest first; filter by agent, only after `since`, at most `limit` (newest). */
    list(filter: { agent?: string; since?: number; limit?: number } = {}): JournalEntry[] {
      const out: JournalEntry[] = [];
      for (let i = 0; i < capacity; i++) {
        const entry = ring[(next + i) % capacity];
        if (!entry) continue;
        if (filter.agent !== undefined && entry.agent !== filter.agent) continue;
        if (filter.since !== undefined && entry.seq <= filter.since) continue;
        settleExchange(entry);
        out.push({ ...entry, time: new Date(entry.at).toISOString() });
      }
      return filter.limit !== undefined ? out.slice(-filter.limit) : out;
    },

    /**
     * A page of at most `max` (MAX_JOURNAL_PAGE) entries, oldest first, from the entry after `since`: it
     * starts at that entry (seqs are consecutive in the ring), so paging through a full journal of a million
     * costs each page its own entries, not a pass over the ring. With `limit`: the newest `limit` (at most
     * `max`) matching entries, as `list` gives them.
     */
    page(filter: JournalFilter = {}, max = MAX_JOURNAL_PAGE): JournalPageOf {
      const size = ring[next] ? capacity : next;
      const oldest = size === capacity ? next : 0;
      const firstSeq = size > 0 ? (ring[oldest] as JournalEntry).seq : seq + 1;
      const at = (i: number) => ring[(oldest + i) % capacity] as JournalEntry;
      const matches = (entry: JournalEntry) => filter.agent === undefined || entry.agent === filter.agent;
      const shown = (entry: JournalEntry) => {
        settleExchange(entry);
        return { ...entry, time: new Date(entry.at).toISOString() };
      };
      const start = Math.max(0, Math.min(size, (filter.since ?? 0) + 1 - firstSeq));
      const entries: JournalEntry[] = [];
      if (filter.limit !== undefined) {
        const wanted = Math.min(filter.limit, max);
        for (let i = size - 1; i >= start && entries.length < wanted; i--)
          if (matches(at(i))) entries.push(shown(at(i)));
        entries.reverse();
        return { capacity, dropped, entries, more: false, next_since: seq };
      }
      let i = start;
      for (; i < size && entries.length < max; i++) if (matches(at(i))) entries.push(shown(at(i)));
      const more = i < size;
      const nextSince = more ? at(i - 1).seq : Math.max(seq, filter.since ?? 0);
      return { capacity, dropped, entries, more, next_since: nextSince };
    },

    clear() {
      ring = new Array(capacity);
      next = 0;
      dropped = 0;
    },

    /** Changes the capacity; the journal starts empty. */
    resize(nextCapacity: number) {
      capacity = nextCapacity;
      ring = new Array(capacity);
      next = 0;
      dropped = 0;
    },

    get capacity() {
      return capacity;
    },

    /** Entries overwritten since the journal last started empty: the oldest requests, of every agent. */
    get dropped() {
      return dropped;
    },
  };
}

export type Journal = ReturnType<typeof createJournal>;

/** What the pipeline stages learn about a request as it goes; recorded when the response is ready. */
export type JournalNote = Partial<
  Omit<JournalEntry, 'seq' | 'request_id' | 'at' | 'time' | 'duration_ms' | 'method' | 'path' | 'status'>
>;
