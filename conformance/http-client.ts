import { IDENTITY_HEADER } from '../vocabulary/identity-header.ts';
import {
  askedWaitOf,
  backoffMs,
  createWaitFloors,
  flooredWaitMs,
  isTransient,
  MAX_TRANSIENT_RETRIES,
  NO_WAIT_RETRIES,
  REAL_CLOCK,
  retryAfterOf,
  type SuiteClock,
  scopeOf,
} from './client-pacing.ts';
import { createTransport } from './http-transport.ts';
import { exhaustedWaitMs, rateLimitHint } from './rate-limit-headers.ts';
import { callKey, credentialOf, type Exchange, type SuiteRequest } from './suite-request.ts';
import { createTokenLedger } from './token-ledger.ts';
import type { TokenSource } from './token-source.ts';
import { applyTransform, type TokenValue } from './token-value.ts';

/* The suite's HTTP client: requests and exchanges in suite-request.ts, retries and waits in client-pacing.ts,
 * the wire in http-transport.ts, tokens seen in token-ledger.ts. This file sends, paces and remembers. */

/** Whether an answer counts as the gateway serving the call: anything but a 429, a 5xx or no answer. */
const isAnswer = (status: number) => status >= 200 && status < 500 && status !== 429;

export interface ClientOptions {
  baseUrl: string;
  tokens: { valid?: TokenSource; denied?: TokenSource; expired?: TokenSource };
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
}

/**
 * The suite's own HTTP client. It obeys the spec's client safety rules (section 7): on 429 it honours
 * Retry-After (or backs off exponentially with jitter when there is none), under a hard retry cap, and once
 * a Retry-After proved too short (a 429 again after waiting it) it keeps its own floor under every later
 * one of that scope, exponential with jitter; any 5xx is retried at most three times the same way
 * (transient, spec section 7: a 500 as a 502). With a token command, a 401 on a real token refreshes it
 * once. `raw` returns the first answer, whatever it is.
 */
export function createSuiteClient(options: ClientOptions) {
  const base = new URL(options.baseUrl);
  const secure = base.protocol === 'https:';
  const maxRetries = options.maxRetries ?? 5;
  // A 429 asking no wait is backed off longer, steps growing to --max-wait-seconds (client-pacing.ts).
  const noWaitRetries = options.maxRetries ?? NO_WAIT_RETRIES;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const clock = options.clock ?? REAL_CLOCK;
  const deadline = options.deadline ?? Number.POSITIVE_INFINITY;
  let requests = 0;
  let answers = 0;
  let waitedMs = 0;
  /** When the gateway accepted and refused each real token (token-ledger.ts). */
  const ledger = createTokenLedger();
  const answered = new Set<string>();
  /** Every 429 the run met, retried or not (ratelimit.retry-after-format judges them all). */
  const seen429: Exchange[] = [];
  /** Per scope, until when the gateway asked not to be called (a 429's wait, or no request left). */
  const gates = new Map<string, { until: number; why: string }>();
  /** Per scope, the requests the gateway last said were left (its rate-limit headers), when it says. */
  const remaining = new Map<string, number>();
  /** Per scope, the suite's own floor under asked waits once one proved too short (client-pacing.ts). */
  const { floorOf, raise: raiseFloor, traffic } = createWaitFloors(options.maxWaitSeconds * 1000);
  /** While false (a property shrinking a counterexample already found), a 5xx is returned as it is. */
  let retryServerErrors = true;
  const log = options.log ?? (() => {});

  /** Waits `ms` on the suite's clock, saying now and then that it still is (a CI log must not look hung). */
  const pause = async (ms: number, why: string) => {
    if (ms >= 2000 && why)
      log(
        `  waiting ${(ms / 1000).toFixed(1)} s: ${why}${Number.isFinite(deadline) ? ` (${Math.max(0, Math.round((deadline - clock.now()) / 1000))} s of the time budget left)` : ''}`,
      );
    const started = clock.now();
    for (let left = ms; left > 0; ) {
      const step = Math.min(left, 15_000);
      await clock.sleep(step);
      left -= step;
      if (left > 0 && why) log(`  ... still waiting (${Math.ceil(left / 1000)} s left)`);
    }
    waitedMs += clock.now() - started;
  };

  /** Remembers a wait the gateway asked of a scope, so that its next calls are paced instead of refused. */
  const learn = (scope: string, waitMs: number | undefined, why: string) => {
    if (waitMs === undefined || waitMs <= 0) return;
    const until = clock.now() + waitMs;
    const gate = gates.get(scope);
    if (!gate || gate.until < until) gates.set(scope, { until, why });
  };
  /** A wait a 429 asked of a scope, with the scope's floor under it once the gateway's waits proved short. */
  const floored = (scope: string, asked: number | undefined) =>
    asked === undefined ? undefined : flooredWaitMs(asked, floorOf(scope));

  /** Holds a call until its scope's gate opens, when that is within --max-wait-seconds and the budget. */
  const paced = async (scope: string, what: string) => {
    const gate = gates.get(scope);
    if (!gate) return;
    const wait = gate.until - clock.now();
    if (wait <= 0 || wait > options.maxWaitSeconds * 1000 || gate.until > deadline) return;
    await pause(wait + 50, `before ${what}: ${gate.why}`);
  };

  const materialise = async (token: TokenValue) => {
    if (token.kind === 'literal') return { value: token.value };
    const source = options.tokens[token.from];
    if (!source) throw new Error(`no ${token.from} token was given`);
    const { value, resolved } = applyTransform(await source.current(), token.transform);
    return { value, redacted: { variable: source.variable, transform: resolved } };
  };

  const transport = createTransport(secure, timeoutMs);
  const sendOnce = (url: URL, method: string, headers: [string, string][], body?: string) => {
    requests += 1;
    return transport.send(url, method, headers, body);
  };

  /**
   * The wait before a retry (the wait asked, in ms, else backoff), or why there is none: beyond
   * --max-wait-seconds, or past the run's time budget. A wait asked is compared as asked (10 s asked is
   * within --max-wait-seconds 10); the jitter added to it is the suite's own.
   */
  const waitFor = (
    asked: number | undefined,
    attempt: number,
    floorMs = 0,
  ): { wait: number } | { refused: 'max-wait' | 'time-budget' } => {
    const base = asked ?? backoffMs(attempt, Math.random, options.maxWaitSeconds * 1000);
    if (base > options.maxWaitSeconds * 1000) return { refused: 'max-wait' };
    const wait =
      asked !== undefined
        ? floorMs > asked
          ? flooredWaitMs(asked, floorMs)
          : asked + Math.random() * 100
        : Math.max(base, floorMs);
    if (clock.now() + wait > deadline) return { refused: 'time-budget' };
    return { wait };
  };

  return {
    /** Requests sent so far (retries included). */
    get requests() {
      return requests;
    },

    /** Time spent waiting as the gateway asked, so far (ms, on the suite's clock). */
    get waitedMs() {
      return waitedMs;
    },

    /** The suite's clock. */
    clock,

    /** The requests the gateway last said were left to a scope ('valid', 'denied', 'anonymous'), if it said. */
    remaining(scope: string): number | undefined {
      return remaining.get(scope);
    },

    /** When the run's time budget ends (ms on `clock`; Infinity without one). */
    deadline,

    /** Waits as the gateway asked (logged, counted, on the suite's clock). */
    pause,

    /** Whether a 5xx is retried (default): off while a property shrinks a failure that stands already. */
    retryServerErrors(on: boolean) {
      retryServerErrors = on;
    },

    /** The floor the suite keeps under a scope's asked waits (ms; 0 while the gateway's waits held). */
    floorOf,

    /** What the gateway said of each real token sent unaltered, in the run's order of answers. */
    ledger,

    /** Every 429 the run has met so far, in order. */
    seen429(): readonly Exchange[] {
      return seen429;
    },

    /** Whether the gateway has answered this call (see `callKey`) with anything but a 429 or a 5xx yet. */
    answered(key: string): boolean {
      return answered.has(key);
    },

    /**
     * Sends a request; the client backs off and retries a 429 (and a 502/503/504) under the caps. With
     * `observe429`, a 429 is returned as is (the rate-limit checks observe them), a transient failure still
     * retried; with `raw`, the first answer is returned, whatever it is.
     */
    async send(
      request: SuiteRequest,
      sendOptions: { raw?: boolean; observe429?: boolean; noRefresh?: boolean } = {},
    ): Promise<Exchange> {
      // Paths are relative to the base URL, path prefix included (spec section 4): a gateway may be
      // mounted under one (`https://api.example/tenant-a`).
      const url = new URL(`${base.href.replace(/\/+$/, '')}${request.path}`);
      const key = callKey(request);
      const credential = credentialOf(request);
      let attempts = 0;
      let transientRetries = 0;
      let transientStatus: number | undefined;
      let refreshed = false;
      let resent = 0;
      let retryAfterWaits = 0;
      /** The scope's count of sends when this request's last 429 arrived (-1 before any). */
      let quiet = -1;
      const scope = scopeOf(credential);
      const what = `${request.method} ${request.path}`;
      for (;;) {
        attempts += 1;
        // A call that observes the limit (the burst) goes as it is; any other waits out what was asked.
        if (!sendOptions.raw && !sendOptions.observe429) await paced(scope, what);
        const headers: [string, string][] = Object.entries(request.headers ?? {});
        let tokenTransform: Exchange['tokenTransform'];
        let redactedHeaders = headers;
        let sentValue: string | undefined;
        if (request.token) {
          const { value, redacted } = await materialise(request.token);
          sentValue = value;
          const name = request.tokenHeader ?? IDENTITY_HEADER;
          // node:http sends a string's characters as latin1 bytes: UTF-8 text must be pre-encoded.
          headers.push([name, Buffer.from(value, 'utf8').toString('latin1')]);
          tokenTransform = redacted;
          redactedHeaders = [...headers.slice(0, -1), [name, redacted ? `<${redacted.variable}>` : value]];
        }
        const sentAfter = answers;
        const tokenId =
          sentValue !== undefined && (credential === 'valid' || credential === 'denied')
            ? ledger.idOf(sentValue)
            : undefined;
        // Alone in its scope since its last answer (nothing sent, nothing in flight): a 429 then is no sibling's.
        const inScope = traffic(scope);
        const alone = quiet === inScope.sent && inScope.inFlight === 0;
        inScope.sent += 1;
        inScope.inFlight += 1;
        const response = await sendOnce(url, request.method, headers, request.body);
        inScope.inFlight -= 1;
        answers += 1;
        const answerNo = answers;
        if (isAnswer(response.status)) answered.add(key);
        const now = clock.now();
        const hint = rateLimitHint(response.headers, now);
        if (hint.remaining !== undefined) remaining.set(scope, hint.remaining);
        const asked = response.status === 429 ? askedWaitOf(response, now) : undefined;
        if (response.status === 429) {
          const lied = alone && inScope.sent === quiet + 1 && retryAfterWaits === attempts - 1;
          if (lied && attempts > 1) raiseFloor(scope);
          quiet = inScope.sent;
        }
        learn(
          scope,
          response.status === 429
            ? floored(scope, asked)
            : exhaustedWaitMs(response.status, response.headers, now),
          response.status === 429
            ? `the gateway answered ${what} 429${asked !== undefined ? ` and asked for ${Math.ceil(asked / 1000)} s` : ''}`
            : `the gateway said no request is left (rate-limit headers on ${what})`,
        );
        const exchange = (rateLimitExhausted: boolean): Exchange => ({
          request,
          url: url.href,
          credential,
          key,
          ...(tokenId !== undefined && { tokenId }),
          sentHeaders: redactedHeaders,
          tokenTransform,
          response,
          attempts,
          rateLimitExhausted,
          ...(rateLimitExhausted && { retryAfterMs: askedWaitOf(response, now) }),
          transientRetries,
          ...(transientStatus !== undefined && { transientStatus }),
        });
        if (response.status === 429) seen429.push(exchange(false));
        if (sentValue !== undefined && tokenId !== undefined)
          ledger.record(sentValue, credential, { exchange: exchange(false), sentAfter, answerNo });
        const code = (response.json as { code?: unknown } | undefined)?.code;
        if (
          response.status === 401 &&
          code === 'invalid_identity_token' &&
          request.token?.kind === 'derived' &&
          request.token.transform.op === 'none' &&
          request.token.from !== 'expired' &&
          resent < 2 &&
          !sendOptions.noRefresh
        ) {
          if (!refreshed && (await options.tokens[request.token.from]?.refresh())) {
            refreshed = true;
            continue;
          }
          refreshed = true;
          // A fixed token the gateway accepted before is resent, twice at most (§5 rule 3: "resend"): one
          // instance may refuse what the others accept. The ledger keeps every answer; auth.valid-token-accepted
          // judges them.
          if (sentValue !== undefined && ledger.everAccepted(sentValue)) {
            resent += 1;
            await pause(backoffMs(1), '');
            continue;
          }
        }
        if (sendOptions.raw) return exchange(false);
        if (retryServerErrors && isTransient(response.status) && transientRetries < MAX_TRANSIENT_RETRIES) {
          // A transient server failure (spec section 7: retry with backoff): a gateway may have one now and
          // then, and the checks judge the outcome, not the hiccup. One that keeps failing is observed.
          const planned = waitFor(retryAfterOf(response, now), transientRetries + 1);
          if ('wait' in planned) {
            transientRetries += 1;
            transientStatus ??= response.status;
            log(
              `  ${response.status} from ${what}: retrying in ${(planned.wait / 1000).toFixed(1)} s (transient failure ${transientRetries}/${MAX_TRANSIENT_RETRIES})`,
            );
            await pause(planned.wait, `retrying ${what} after a ${response.status}`);
            continue;
          }
        }
        if (response.status !== 429 || sendOptions.observe429) return exchange(false);
        const cap = asked === undefined ? noWaitRetries : maxRetries;
        const planned = attempts <= cap ? waitFor(asked, attempts, floorOf(scope)) : undefined;
        if (!planned || 'refused' in planned) {
          const untruthful =
            attempts > cap &&
            retryAfterWaits === attempts - 1 &&
            asked !== undefined &&
            asked <= options.maxWaitSeconds * 1000;
          const overBudget = planned !== undefined && planned.refused === 'time-budget';
          return {
            ...exchange(true),
            ...(untruthful && { retryAfterUntruthful: true }),
            ...(overBudget && { timeBudgetExhausted: true }),
          };
        }
        if (asked !== undefined) retryAfterWaits += 1;
        const floorMs = floorOf(scope);
        const own =
          asked !== undefined && floorMs > asked
            ? `; the suite waits at least ${(floorMs / 1000).toFixed(0)} s, as this gateway's earlier waits proved too short`
            : '';
        await pause(
          planned.wait,
          `the gateway answered ${what} 429${asked !== undefined ? ` and asked for ${Math.ceil(asked / 1000)} s` : ' (no wait asked: backing off)'}${own} (attempt ${attempts}/${cap + 1})`,
        );
      }
    },

    close() {
      transport.close();
    },
  };
}

export type SuiteClient = ReturnType<typeof createSuiteClient>;
