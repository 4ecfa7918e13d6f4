import { REAL_CLOCK, type SuiteClock } from '../model/suite-clock.ts';
import type { Exchange, SuiteRequest } from '../model/suite-request.ts';
import { createTokenLedger } from '../tokens/token-ledger.ts';
import type { TokenSource } from '../tokens/token-source.ts';
import { withIdempotencyKey } from './client-idempotency-key.ts';
import { createWaitFloors, NO_WAIT_RETRIES } from './client-pacing.ts';
import { type ClientCore, type SendOptions, sendRequest } from './client-send.ts';
import { createClientWaits } from './client-waits.ts';
import { createTransport } from './http-transport.ts';
import { createShortWaits, type ShortWait } from './short-waits.ts';

/* The suite's HTTP client: requests and exchanges in suite-request.ts, retries and waits in client-pacing.ts
 * and client-waits.ts, one request's attempts and retry decisions in client-send.ts, tokens in
 * client-token.ts, the wire in http-transport.ts, tokens seen in token-ledger.ts. */

interface ClientOptions {
  baseUrl: string;
  tokens: { valid?: TokenSource; denied?: TokenSource; expired?: TokenSource; revoked?: TokenSource };
  /** Longest Retry-After the client waits; beyond it the request is reported as rate-limit exhausted. */
  maxWaitSeconds: number;
  /** Hard cap on retries of one request after 429 (spec section 7: retry loops must have a hard cap). */
  maxRetries?: number;
  timeoutMs?: number;
  /** Where the client says it is waiting. */
  log?: (line: string) => void;
  /** The clock the waits run on (default real time). */
  clock?: SuiteClock;
  /** When the run's time budget ends, on `clock` (ms): no wait is begun that would end after it. */
  deadline?: number;
  /** The paths of write-like tools (POST): each call to one carries its idempotency key (spec §7). */
  writeLikePaths?: readonly string[];
}

/** What the client keeps across requests: settings, counters, waits, floors and what the gateway said. */
function createClientCore(options: ClientOptions): ClientCore {
  const base = new URL(options.baseUrl);
  const clock = options.clock ?? REAL_CLOCK;
  const log = options.log ?? (() => {});
  /** Per scope, the suite's own floor under asked waits once one proved too short (client-pacing.ts). */
  const floors = createWaitFloors(options.maxWaitSeconds * 1000);
  return {
    base,
    tokens: options.tokens,
    maxWaitSeconds: options.maxWaitSeconds,
    maxRetries: options.maxRetries ?? 5,
    // A 429 asking no wait is backed off longer, steps growing to --max-wait-seconds (client-pacing.ts).
    noWaitRetries: options.maxRetries ?? NO_WAIT_RETRIES,
    clock,
    log,
    counts: { requests: 0, answers: 0 },
    /** While false (a property shrinking a counterexample already found), a 5xx is returned as it is. */
    retryServerErrors: true,
    transport: createTransport(base.protocol === 'https:', options.timeoutMs ?? 15_000),
    waits: createClientWaits({
      clock,
      deadline: options.deadline ?? Number.POSITIVE_INFINITY,
      maxWaitSeconds: options.maxWaitSeconds,
      log,
      floorOf: floors.floorOf,
    }),
    floors,
    /** When the gateway accepted and refused each real token (token-ledger.ts). */
    ledger: createTokenLedger(),
    answered: new Set<string>(),
    /** Every 429 the run met, retried or not (ratelimit.retry-after-format judges them all). */
    seen429: [],
    shortWaits: createShortWaits(),
    longestAsked: new Map(),
    honoured: new Map(),
    /** Per scope, the requests the gateway last said were left (its rate-limit headers), when it says. */
    remaining: new Map<string, number>(),
  };
}

/**
 * The suite's own HTTP client. It obeys the spec's client safety rules (section 7): on 429 it honours
 * Retry-After (or backs off exponentially with jitter when there is none), under a hard retry cap, and once
 * a Retry-After proved too short (a 429 again after waiting it) it keeps its own floor under every later
 * one of that scope, exponential with jitter; any 5xx is retried at most three times the same way
 * (transient, spec section 7: a 500 as a 502). With a token command, a 401 on a real token refreshes it
 * once. A call to a write-like tool carries its idempotency key, the same on every retry and repeat. `raw` returns the first answer, whatever it is.
 */
export function createSuiteClient(options: ClientOptions) {
  const core = createClientCore(options);
  const writeLike = new Set(options.writeLikePaths ?? []);
  return {
    /** Requests sent so far (retries included). */
    get requests() {
      return core.counts.requests;
    },

    /** Time spent waiting as the gateway asked, so far (ms, on the suite's clock). */
    get waitedMs() {
      return core.waits.waitedMs;
    },

    /** The suite's clock. */
    clock: core.clock,

    /** The requests the gateway last said were left to a scope ('valid', 'denied', 'anonymous'), if it said. */
    remaining(scope: string): number | undefined {
      return core.remaining.get(scope);
    },

    /** When the run's time budget ends (ms on `clock`; Infinity without one). */
    deadline: options.deadline ?? Number.POSITIVE_INFINITY,

    /** Waits as the gateway asked (logged, counted, on the suite's clock). */
    pause: core.waits.pause,

    /** Whether a 5xx is retried (default): off while a property shrinks a failure that stands already. */
    retryServerErrors(on: boolean) {
      core.retryServerErrors = on;
    },

    /** The floor the suite keeps under a scope's asked waits (ms; 0 while the gateway's waits held). */
    floorOf: core.floors.floorOf,

    /** What the gateway said of each real token sent unaltered, in the run's order of answers. */
    ledger: core.ledger,

    /** Every 429 the run has met so far, in order. */
    seen429(): readonly Exchange[] {
      return core.seen429;
    },

    /**
     * The waits 429s asked that proved too short, as the client saw them: a retry sent once the wait had
     * passed answered 429 again, and no call of the suite's that could have taken the freed slot admitted.
     */
    shortWaits(): readonly ShortWait[] {
      return core.shortWaits.proven();
    },

    /** The longest wait a 429 to this call (`GET /v1/whoami`: method and path) asked so far (ms; 0 before any). */
    longestAsked(call: string): number {
      return core.longestAsked.get(call) ?? 0;
    },

    /**
     * The client's own evidence that a 429's wait on this call (`POST /v1/web/fetch`) held: the last retry
     * sent once the wait had passed that the gateway admitted, with the 429 that asked the wait.
     */
    honouredWait(call: string): { asked: Exchange; admitted: Exchange } | undefined {
      return core.honoured.get(call);
    },

    /** Whether the gateway has answered this call (see `callKey`) with anything but a 429 or a 5xx yet. */
    answered(key: string): boolean {
      return core.answered.has(key);
    },

    /**
     * Sends a request; the client backs off and retries a 429 (and a 502/503/504) under the caps. With
     * `observe429`, a 429 is returned as is (the rate-limit checks observe them), a transient failure still
     * retried; with `raw`, the first answer is returned, whatever it is.
     */
    send(request: SuiteRequest, sendOptions: SendOptions = {}): Promise<Exchange> {
      return sendRequest(core, withIdempotencyKey(request, writeLike), sendOptions);
    },

    close() {
      core.transport.close();
    },
  };
}

export type SuiteClient = ReturnType<typeof createSuiteClient>;
