import type { VirtualClock } from '../clock.ts';
import type { ResolvedConfig } from '../config/load-config.ts';
import type { Operation, ToolConfig } from '../config/schema.ts';
import type { GatewayError } from '../errors.ts';
import type { IdempotencyOutcome, StoredResponse } from '../idempotency.ts';
import type { Agent, AgentPatch } from '../identity/agent-registry.ts';
import type { Identity } from '../identity/identity-provider.ts';
import type { JournalEntry, JournalExport, JournalFilter, JournalPageOf } from '../journal/journal.ts';
import type { EntryWork, ExchangeWork } from '../journal/record-ring.ts';
import type { AdmitResult } from '../limits/rate-limiter.ts';
import type { MaybePromise } from '../maybe-promise.ts';
import type { Fault, FaultSpec, FaultTarget } from '../scenarios/faults.ts';

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

/**
 * What adds a reader's facts to an entry (see `JournalPort.record`; `pipeline/entry-readings.ts`): at once,
 * or kept as bytes in the journal's record until the entry is read (`recordTo`): the journal's `EntryWork`.
 */
export type EntryReadings = EntryWork;

export interface JournalPort {
  /**
   * Records a finished request. `exchange` builds its redacted exchange (headers and body starts), and
   * `readings` adds to the entry what only a reader needs (the secrets found in its headers and call URL):
   * in memory when the entry is first read, on a shared store at once (nothing unredacted goes into it).
   */
  record(entry: Omit<JournalEntry, 'seq' | 'time'>, exchange?: ExchangeWork, readings?: EntryReadings): void;
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
  readInSlices(filter: Pick<JournalFilter, 'agent'>): Promise<JournalSlice>;
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

/** An agent the admin API creates (the registry sets its token generation and incarnation). */
export type NewAgent = Pick<Agent, 'id' | 'name' | 'apiKey' | 'tier' | 'allowlist' | 'disabled'>;

/** A change of the virtual clock, as the admin API asks for it. */
export type ClockChange =
  | { kind: 'freeze' }
  | { kind: 'resume' }
  | { kind: 'reset' }
  | { kind: 'advance'; ms: number }
  /** `frozen` true: stopped at exactly `epochMs`; false: running on from it; undefined: as it was. */
  | { kind: 'set'; epochMs: number; frozen?: boolean };

/**
 * The admin state (agents, tools, faults, the clock, the scenario), changed one entity at a time. In memory
 * each change is made on this process's registry, policy, faults and clock. On a shared store each is one
 * atomic script on that entity's keys (never a read-modify-write of the whole state), answered once Redis
 * has it and this instance has taken it over; the other instances take it over within a bound
 * (docs/operators.md). A change that cannot apply says why in its result, never by half-applying.
 */
export interface AdminPort {
  createAgent(agent: NewAgent): MaybePromise<'created' | 'id_taken' | 'key_taken'>;
  /** False: no such agent. */
  updateAgent(id: string, patch: AgentPatch): MaybePromise<boolean>;
  /** False: no such agent. */
  revokeTokens(id: string): MaybePromise<boolean>;
  updateTool(tool: string, patch: Partial<ToolConfig>): MaybePromise<void>;
  armFault(spec: FaultSpec): MaybePromise<Fault>;
  /** False: no such fault. */
  disarmFault(id: string): MaybePromise<boolean>;
  clearFaults(): MaybePromise<void>;
  /** Throws a RangeError for a time outside the clock's range (nothing changed). */
  changeClock(change: ClockChange): MaybePromise<void>;
  /**
   * After this instance put a reset or scenario in force: every instance takes over its whole admin state,
   * and the counts and the journal start over everywhere. Nothing to do in memory.
   */
  replaced(): MaybePromise<void>;
}
