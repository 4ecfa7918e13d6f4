import type { VirtualClock } from '../clock.ts';
import type { ResolvedConfig } from '../config/load-config.ts';
import type { Operation } from '../config/schema.ts';
import type { GatewayError } from '../errors.ts';
import type { IdempotencyOutcome, StoredResponse } from '../idempotency.ts';
import type { Identity } from '../identity/identity-provider.ts';
import type { JournalExchange } from '../journal/exchange-capture.ts';
import type { JournalEntry, JournalExport, JournalFilter, JournalPageOf } from '../journal/journal.ts';
import type { AdmitResult } from '../limits/rate-limiter.ts';
import type { MaybePromise } from '../maybe-promise.ts';
import type { Fault, FaultTarget } from '../scenarios/faults.ts';

/**
 * The state the pipeline keeps between requests (limits, idempotency keys, the journal, fault strikes, the
 * clock), behind one port with two implementations chosen once, when the gateway is built: in memory
 * (`createMemoryState`, synchronous: the hot path awaits nothing) or on a shared store (`createRedisState`,
 * promises, several instances acting as one). Stages and handlers call the port and never ask which.
 */
export interface StatePort {
  /** The clock every decision reads (the same one in both implementations; restored from the store when shared). */
  readonly clock: VirtualClock;
  readonly limits: LimitsPort;
  readonly idempotency: IdempotencyPort;
  readonly journal: JournalPort;
  readonly faults: FaultsPort;
  /**
   * Why no token may be judged or signed now (a shared store holding another signing secret: 503), or
   * undefined. Always undefined in memory.
   */
  refusal(): GatewayError | undefined;
  /** Takes over a config put in force (limits, idempotency ttl and size, journal capacity). */
  configure(config: ResolvedConfig): void;
}

/** What the limits decided about one request. */
export type LimitDecision =
  /** The token's generation is behind the store's (revoked through another instance). */
  | { kind: 'revoked' }
  /** The agent is at its concurrency limit. */
  | { kind: 'concurrency'; inFlight: number }
  /**
   * Every rate-limit rule's outcome; when allowed, the request holds an in-flight slot (`inFlight` counts
   * it) to give back with `release`. A refused request holds none.
   */
  | { kind: 'decided'; result: AdmitResult; inFlight: number; release(): void };

export interface LimitsPort {
  /** Concurrency, then every rate-limit rule that applies, decided at `now` (one atomic step). */
  admit(
    identity: Identity,
    operation: Operation,
    now: number,
    maxInFlight: number | null | undefined,
  ): MaybePromise<LimitDecision>;
}

export interface IdempotencyPort {
  /** Claims `key` for a request (or finds its stored answer); 409/422 are thrown GatewayErrors. */
  begin(agentId: string, key: string, fingerprint: string, now: number): MaybePromise<IdempotencyOutcome>;
  /** Stores the answer for replay, or frees the key after a failure (`response` undefined). */
  finish(
    agentId: string,
    key: string,
    fingerprint: string,
    now: number,
    response: StoredResponse | undefined,
    storeKey?: string,
  ): void;
}

/** Entries and how many were overwritten before them. */
/** Entries up to seq `until`, slice by slice as they are asked for (memory: a generator; Redis: async). */
export interface JournalEntrySlices {
  until: number;
  dropped: number;
  slices: Iterable<JournalEntry[]> | AsyncIterable<JournalEntry[]>;
}

export interface JournalSlice {
  entries: JournalEntry[];
  dropped: number;
}

export interface JournalPort {
  /**
   * Records a finished request. `exchange` builds its redacted exchange (headers and body starts): in
   * memory when the entry is first read, on a shared store at once (nothing unredacted goes into it).
   */
  record(entry: Omit<JournalEntry, 'seq' | 'time'>, exchange?: () => JournalExchange): void;
  /**
   * A page of the journal (GET /__admin/journal): every instance's on a shared store; its entries are
   * redacted a few milliseconds at a time, so a page of large entries is not one long block.
   */
  page(filter: JournalFilter): Promise<JournalPageOf>;
  /** The entries a query asks for (export, findings): in memory all of them, on a shared store one page. */
  list(filter: JournalFilter): MaybePromise<JournalSlice>;
  /**
   * Every entry of an agent (or of all), what the client report grades: read in bounded slices, the event
   * loop free between two (admin report, readClientReport).
   */
  readInSlices(filter: { agent?: string }): Promise<JournalSlice>;
  /**
   * An NDJSON export of the entries up to now (GET /__admin/journal/export), made slice by slice as it is
   * written; on a shared store a store down fails here, before the first byte.
   */
  exportSlices(filter: { agent?: string; since?: number }): MaybePromise<JournalExport>;
  /** The same entries as slices of entries rather than text (the HAR export), with how many were dropped. */
  entrySlices(filter: JournalFilter): MaybePromise<JournalEntrySlices>;
  /** Empties the journal (this instance's and the store's). */
  clear(): MaybePromise<void>;
}

export interface FaultsPort {
  /**
   * Counts a request to `target` against the armed faults and returns the one that strikes, if any; a
   * spent fault is disarmed (everywhere, on a shared store). Nothing armed: undefined, at once.
   */
  strike(target: FaultTarget, agentId: string | undefined): MaybePromise<Fault | undefined>;
}
