import type { z } from 'zod';
import type { ResolvedConfig } from '../config/load-config.ts';
import type { GatewayError } from '../errors.ts';
import type { VerifyResult } from '../identity/identity-provider.ts';
import type { JournalNote } from '../journal/journal.ts';
import type { MaybePromise } from '../maybe-promise.ts';
import type { FrozenScan, ScanCaller, ScanResult, SplitParts } from '../secrets/secrets.ts';

/**
 * The platform-free core's view of a request: what every adapter (node:http, web fetch, msw) can give
 * cheaply, and nothing more. Header names are looked up in lower case; the body is read only when a stage
 * asks for it (unauthenticated bodies are never read).
 */
export interface GatewayRequest {
  /** As sent, e.g. `GET`. */
  readonly method: string;
  /** The path as sent, percent-escapes included, without the query. */
  readonly path: string;
  /** The query string without `?` (empty when there is none). */
  readonly query: string;
  /** A header's value by lower-case name; repeated headers joined with `, `. */
  header(name: string): string | undefined;
  /** Every header as `[lower-case name, value]`, when the adapter can list them (for the secret scan). */
  headers?(): Iterable<[string, string]>;
  /**
   * The same headers as one flat list, `[name, value, name, value, ...]`, when the adapter has them at hand
   * (node:http): one array a request rather than a pair each (`pipeline/header-list.ts` reads either).
   */
  headerList?(): readonly string[];
  /**
   * The body bytes as sent (Content-Encoding is the core's business), at most `maxBytes`: beyond them a 413,
   * whatever Content-Length said; a client that hangs up mid-body is a 400. Read at most once.
   */
  body(maxBytes: number): Promise<Uint8Array>;
  /**
   * The body when all of it has arrived already (as `body` would give it, at most `maxBytes`), without a
   * wait; undefined when it has not (or when it is refused: `body` then says why). Optional: an adapter that
   * has it spares the pipeline a tick per request (node:http, where a small body comes with its headers).
   * Counts as the one read.
   */
  arrivedBody?(maxBytes: number): Uint8Array | undefined;
  /**
   * Calls `listener` once the rest of the request is known never to arrive (a parser error in its body, the
   * request timeout), with the error the gateway answers it with; at once if it is known already. For a
   * handler that does not read the body through `body` (the proxy pipes it on). node:http only.
   */
  onAbort?(listener: (error: GatewayError) => void): void;
  /** `scheme://host[:port]` the caller addressed, for links in answers. */
  readonly origin: string;
  /** The connection it came on, when the adapter has one (node:http); msw and direct fetch calls have none. */
  readonly connection?: ConnectionFacts;
  /**
   * The headers as sent, `[name, value, name, value, ...]` (Node's `rawHeaders`), for the journal to keep
   * (`journal.body_bytes`); adapters that cannot give them cheaply leave it out.
   */
  rawHeaders?(): readonly string[];
  /** In process (msw, direct fetch calls): which answers the caller had when it issued the request. */
  readonly delivery?: DeliveryFacts;
  /**
   * node:http: the turn of the event loop the request was read in (adapters/node/loop-turn.ts), and the
   * turn an answer written now is written in (asked when it is written: the turn after is counted as the
   * loop's first poll after the answer), for the journal's turn facts.
   */
  readonly readTurn?: number;
  answerTurn?(): number;
  /**
   * node:http and in process (fetch adapter): the loop's runs of stalls before the request was read
   * (adapters/node/loop-stall.ts).
   */
  readonly readStalls?: [number, number, number, number][];
}

/** The turn facts a request's entry carries (`JournalEntry.read_turn` and the rest). */
export type TurnFacts = Pick<JournalNote, 'read_turn' | 'opened_turn' | 'written_turn' | 'stall_runs'>;

/**
 * The in-process adapter's causality facts, the counterpart of a connection's: answers are numbered in the
 * order they were handed back to the caller, and a request records how many had been when it was issued.
 */
export interface DeliveryFacts {
  /** Answers handed back (by this adapter, to any caller) before the request was issued. */
  readonly seen: number;
  /** This request's answer's place in that order (1 = the first handed back); set when it is handed back. */
  order?: number;
}

/** What the Node adapter knows of a request's connection. */
export interface ConnectionFacts {
  /** Unique per connection for the adapter's lifetime. */
  readonly id: number;
  /** When it was opened, on the real monotonic clock (`performance.now()`, ms). */
  readonly openedAt: number;
  /** The turn of the event loop it was accepted in (adapters/node/loop-turn.ts). */
  readonly openedTurn?: number;
  readonly remoteAddress?: string;
}

/** The core's answer: status, headers (lower-case names) and body text, or a dropped connection. */
export interface GatewayResponse {
  status: number;
  headers: Record<string, string>;
  /** JSON, markdown or HTML text; empty for none. */
  body: string;
  /**
   * The body's UTF-8 bytes when they are known already (a tool answer serialised once for many calls:
   * `pipeline/run-tool.ts`), shared and never changed: an adapter writes them rather than encode `body`.
   */
  encoded?: Uint8Array;
  /** Close the connection without answering (an injected fault); status is 0. */
  drop?: true;
  /**
   * A long answer (the journal's NDJSON export) written after `body` as it is made, slice by slice, with
   * backpressure (`journal/write-slices.ts`); no Content-Length then.
   */
  stream?: Iterable<string> | AsyncIterable<string>;
  /**
   * The last stage: adapters call it once the answer is written (or the connection dropped), with the
   * real monotonic time (`performance.now()`), so the journal holds when the client could see it, and the
   * body's UTF-8 bytes when it encoded the body to write it (the journal then copies those instead of
   * encoding the text again).
   */
  record(writtenAt: number, encodedBody?: Uint8Array): void;
}

/**
 * What every request may use whatever its route (answers, body reading, the journal's notes): the clock,
 * the log, the secret scan and the server's limits. The runtime gives it; a stage's own dependencies (the
 * state port, the verifier, the policy) are its own argument, typed by the stage.
 */
export interface CallServices {
  /** Read live: a scenario replaces the config in force. */
  readonly config: Pick<ResolvedConfig, 'server'>;
  /** `epoch`: how many times the clock was moved back (a virtual clock's; absent for a plain clock). */
  readonly clock: { now(): number; readonly epoch?: number };
  readonly log: (line: string) => void;
  /**
   * Finds (and redacts) secrets in text the caller sent; `frozen()`, when there, scans later with the
   * secrets known now (the readings the journal makes when an entry is first read); `outgoing()` moves the
   * memory of split secrets on to an outgoing text, in the order they are sent (`secrets.ts`).
   */
  readonly scanSecrets: ((text: string, own: ScanCaller) => ScanResult) & {
    frozen?(): FrozenScan;
    outgoing?(text: string, own: ScanCaller): SplitParts | undefined;
  };
  /** Whose a token is (`pipeline/attribute.ts`: a request no stage named); absent in bare stage tests. */
  readonly verifier?: { verify(token: string): VerifyResult | Promise<VerifyResult> };
  /** Whose an API key is, and which agents exist (`pipeline/attribute.ts`). */
  readonly registry?: {
    findByApiKey(apiKey: string): { readonly id: string } | undefined;
    get(id: string): { readonly id: string } | undefined;
  };
  /** When this gateway started, on its clock (`pipeline/attribute.ts`: a token issued before is none it minted). */
  readonly startedAt?: number;
}

/** Per-request state the stages share. */
export interface CallContext {
  readonly request: GatewayRequest;
  /** The services every request may use (the runtime, seen through `CallServices`). */
  readonly runtime: CallServices;
  readonly requestId: string;
  /** What the journal learns about the request as it goes through the stages. */
  readonly note: JournalNote;
  /** Arrival on the gateway clock (ms since the epoch) and on the real monotonic clock. */
  readonly at: number;
  /** The clock's epoch at arrival (`VirtualClock.epoch`), when the clock counts them. */
  readonly epoch?: number;
  readonly started: number;
  /** The body bytes a stage read (tool calls), for the journal to keep (`journal.body_bytes`). */
  requestBody?: Uint8Array;
  /**
   * The tool whose body was read and accepted (`bodyTool`), and the real time it was (`sentAt`, for the
   * request meaning's cache-buster): the journal works out the body's fingerprint, meaning and other secrets from them and
   * `requestBody` when the entry is first read (`pipeline/entry-readings.ts`); the request path does not.
   */
  bodyTool?: BodyTool;
  sentAt?: number;
  /** The scan of the secrets known when the body was read, for its readings (`bodyTool`). */
  bodyScan?: FrozenScan;
  /**
   * What the call sends out (the query or URL) as sent, read when the entry is first read: its secrets
   * (also one split across the agent's previous text: `before`, the memory's state taken in order on the
   * path) and its credentials by place redacted into the note's `field`, with the secrets known at the call.
   */
  outgoing?: OutgoingText;
  /**
   * The identity token the call carried, as the journal keeps it (one copy per token), read from the header
   * once by `tokenOf` (null: none): the stages and the record stage each need it.
   */
  token?: string | null;
}

/** An outgoing text left for the journal's first read of the entry (`CallContext.outgoing`). */
export interface OutgoingText {
  readonly field: 'query' | 'url';
  readonly text: string;
  readonly own: ScanCaller;
  readonly before?: SplitParts;
  readonly scan: FrozenScan;
}

/** A tool as the journal's readings of its body need it (the pipeline's `ToolSpec`). */
export interface BodyTool {
  readonly tool: string;
  readonly field?: 'query' | 'url';
  readonly schema: z.ZodType<unknown>;
  /** What makes two of its calls the same request (`tools/request-meaning.ts`: `MeaningOfCalls`). */
  readonly meaning: {
    readonly name: string;
    requestMeaning(body: Record<string, unknown>, near?: readonly number[]): readonly string[];
  };
}

/** A route handler: the stages of one endpoint, ending in an answer (errors are thrown GatewayErrors). */
export type Handler = (ctx: CallContext, params: Record<string, string>) => MaybePromise<Answer>;

/** What a handler returns before the record stage is attached. */
export type Answer = Omit<GatewayResponse, 'record'>;
