import {
  backoffMs,
  isSignalledShedding,
  isTransient,
  MAX_TRANSIENT_RETRIES,
  retryAfterOf,
} from '../client/client-pacing.ts';
import { retryWaitMs } from '../client/client-waits.ts';
import { curlFor } from '../client/curl.ts';
import { reproductionOf } from '../client/recorded-exchange.ts';
import type { Exchange } from '../model/suite-request.ts';
import { acceptsToken, refusesToken } from '../tokens/token-ledger.ts';
import { createShedPacing, WAVE } from './burst-pacing.ts';
import type { CheckContext, CheckOutcome, Endpoint } from './check-contract.ts';
import { codeOf, isRepeatRefusal } from './check-contract.ts';
import { type RetryAfterProbe, waitOutLimit } from './retry-after-probe.ts';
import { requestFor, VALID_TOKEN } from './support.ts';
import type { TimedExchange } from './timed-exchange.ts';

export type { TimedExchange };

/** An endpoint the burst met a 429 on, with those 429s (the latest last) and the probe after their wait. */
interface LimitedEndpoint {
  endpoint: Endpoint;
  rateLimited: TimedExchange[];
  /** The request sent once the latest 429's Retry-After had passed (none without a Retry-After). */
  probe?: RetryAfterProbe;
}

/** What one bounded burst with the valid token showed; shared by the ratelimit.* checks. */
export interface BurstObservation {
  /** Every burst request's final answer (after the retries of a transient 5xx). */
  exchanges: TimedExchange[];
  rateLimited: TimedExchange[];
  /** Answers that are neither 2xx nor 429 nor a 5xx (a 403, say), or carry `rate_limited` with a status other than 429. */
  refusals: TimedExchange[];
  /** Answers that were a 5xx at first (whether a retry cleared them or not), shed with Retry-After or not. */
  transient: TimedExchange[];
  /** Among `transient`, the 5xx without a Retry-After (or other than 503) that a retry cleared. */
  unsignalled: TimedExchange[];
  /** 5xx still there after the retries, and dropped connections. */
  serverErrors: TimedExchange[];
  /**
   * When the burst, down to one request at a time, was still shed with 503 + Retry-After, call after call,
   * after the gateway had served some: those 503s (a limit signalled as 503), and how many were served first.
   */
  limitAs503?: { shed: readonly TimedExchange[]; servedBefore: number };
  /** Repeats refused as duplicates (409): that endpoint's burst ended there (retry.sequential judges them). */
  repeatRefused: TimedExchange[];
  /** The valid token refused (401 invalid_identity_token): it expired during the run? */
  tokenRefused?: TimedExchange;
  /**
   * Every endpoint the burst met a 429 on, in the order burst: each tool the gateway limits is judged, not
   * only the first (a per-tool limit's Retry-After may lie where whoami's tells the truth).
   */
  limited: LimitedEndpoint[];
  requests: number;
  budget: number;
}

export { createShedPacing, LIMIT_AS_503 } from './burst-pacing.ts';

/**
 * A 5xx clears when a retry answers 2xx or 429. Load shed with 503 and a Retry-After (Envoy's overload
 * manager, a concurrency limit) is allowed in any amount, when a retry clears it; a 5xx that says nothing
 * (a 500, a 502, a bare 503) is tolerated when sporadic: at most this many, or this share of the burst.
 * More is the burst answered with server errors: load shed without telling the client when to return.
 */
export const SPORADIC = { count: 3, share: 0.1 };

/** Whether the burst's unsignalled 5xx are more than sporadic failures explain. */
export const beyondSporadic = (burst: Pick<BurstObservation, 'unsignalled' | 'requests'>) =>
  burst.unsignalled.length > SPORADIC.count && burst.unsignalled.length > SPORADIC.share * burst.requests;

type Kind = 'ok' | 'limited' | 'refusal' | 'repeat' | 'server-error' | 'token-refused';

function kindOf(exchange: Exchange): Kind {
  const { status } = exchange.response;
  const code = codeOf(exchange);
  if (status === 429) return 'limited';
  // A repeat refused as a duplicate breaks retry safety (retry.sequential judges it), not the 429 rule.
  if (isRepeatRefusal(exchange) && code !== 'rate_limited') return 'repeat';
  // The limit signalled with another status, a 200 included: a refusal of the 429 rule, never "served".
  if (code === 'rate_limited') return 'refusal';
  if (status >= 200 && status < 300) return 'ok';
  if (status === 0 || status >= 500) return 'server-error';
  if (status === 401 && code === 'invalid_identity_token') return 'token-refused';
  return 'refusal';
}

/**
 * Retries a 5xx of the burst, up to three times, each once its Retry-After (if within --max-wait-seconds)
 * and the suite's jittered backoff have passed since that answer arrived. A bare 5xx is retried in the
 * background: the burst keeps its pace meanwhile, so a limiter that answers 503 is still under pressure
 * when the retry arrives, and a sporadic failure clears. Load shed with 503 + Retry-After is retried as
 * the gateway asked, with less concurrency (spec §7: "reduce concurrency"): once the burst is over, one
 * request at a time, so whether a retry clears it does not turn on how the burst's waves overlapped.
 */
export async function retryTransient(ctx: CheckContext, first: TimedExchange): Promise<TimedExchange> {
  let current = first;
  const signalled = isSignalledShedding(first.exchange.response);
  for (let attempt = 1; attempt <= MAX_TRANSIENT_RETRIES; attempt++) {
    // The suite's backoff is the floor; a Retry-After beyond --max-wait-seconds is not waited, the floor is.
    const floor = backoffMs(attempt);
    const planned = retryWaitMs(
      retryAfterOf(current.exchange.response, current.receivedAt),
      attempt,
      ctx.maxWaitSeconds * 1000,
      floor,
    );
    const wait = planned === 'max-wait' ? floor : planned;
    await ctx.sleep(Math.max(0, current.receivedAt + wait - ctx.now()));
    const exchange = await ctx.client.send(first.exchange.request, { raw: true });
    current = {
      exchange: { ...exchange, transientRetries: attempt, transientStatus: first.exchange.response.status },
      receivedAt: ctx.now(),
      signalled,
    };
    if (!isTransient(exchange.response.status)) break;
  }
  return current;
}

/**
 * Whether whoami accepts the very token a wave's 401 refused, sent after that refusal (up to 3 tries, one
 * after another). A token a --token-command replaced meanwhile is not that token: an expiry, not a fault.
 */
async function acceptedAgain(ctx: CheckContext, refused: Exchange): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const whoami = await ctx.client.send(requestFor(ctx.endpoints.whoami, { token: VALID_TOKEN }), {
      noRefresh: true,
    });
    if (whoami.tokenId !== refused.tokenId) return false;
    if (acceptsToken(whoami)) return true;
    if (!refusesToken(whoami)) return false;
  }
  return false;
}

/** What the burst of one endpoint showed: its answers' kinds so far, and the 429s it met. */
interface EndpointBurst {
  served: number;
  /** Answers the gateway served (2xx) to this endpoint in this burst. */
  ok: number;
  rateLimited: TimedExchange[];
  stop: boolean;
}

/** Everything one burst shares across its endpoints: the answers, the pacing, the shed requests' queue. */
function createBurstState(ctx: CheckContext) {
  const answers: Promise<TimedExchange>[] = [];
  const wronglyRefused = new Set<Exchange>();
  const pacing = createShedPacing(ctx.rateLimitBudget);
  // Shed requests (503 + Retry-After) wait for the burst to end, then are retried one after another.
  let burstOver = () => {};
  let shedQueue = new Promise<void>((resolve) => {
    burstOver = resolve;
  });
  const retryLater = (timed: TimedExchange) => {
    const retried = shedQueue.then(() => retryTransient(ctx, timed));
    shedQueue = retried.then(() => undefined);
    return retried;
  };
  const keep = (timed: TimedExchange) =>
    answers.push(
      !isTransient(timed.exchange.response.status)
        ? Promise.resolve(timed)
        : isSignalledShedding(timed.exchange.response)
          ? retryLater(timed)
          : retryTransient(ctx, timed),
    );
  return { answers, wronglyRefused, pacing, keep, end: () => burstOver() };
}

/**
 * Bursts one endpoint with its share of the budget, in waves, until a 429, another refusal or the share
 * is spent. `first` waves send one more than the gateway said is left (RateLimit / X-RateLimit-Remaining),
 * so the limit is met however slow the machine is.
 */
async function burstEndpoint(
  ctx: CheckContext,
  state: ReturnType<typeof createBurstState>,
  endpoint: Endpoint,
  share: number,
): Promise<EndpointBurst> {
  const { pacing, wronglyRefused } = state;
  const seen: EndpointBurst = { served: 0, ok: 0, rateLimited: [], stop: false };
  for (let first = true; seen.served < share && !pacing.exhausted; first = false) {
    const size = pacing.size(share - seen.served, first ? ctx.client.remaining('valid') : undefined);
    const wave = await Promise.all(
      Array.from({ length: size }, async (): Promise<TimedExchange> => {
        const exchange = await ctx.client.send(requestFor(endpoint, { token: VALID_TOKEN }), { raw: true });
        return { exchange, receivedAt: ctx.now(), sentBefore: ctx.client.requests };
      }),
    );
    seen.served += pacing.record(wave);
    for (const timed of wave) state.keep(timed);
    let kinds = wave.map((t) => kindOf(t.exchange));
    // A 401 to the valid token, and whoami accepts that token again right after: the refusal was the
    // gateway's (auth.valid-token-accepted judges it), not an expired token; the burst goes on.
    const refused = wave.find((t) => kindOf(t.exchange) === 'token-refused');
    if (refused && (await acceptedAgain(ctx, refused.exchange))) {
      for (const t of wave) if (kindOf(t.exchange) === 'token-refused') wronglyRefused.add(t.exchange);
      kinds = kinds.filter((k) => k !== 'token-refused');
    }
    seen.ok += kinds.filter((k) => k === 'ok').length;
    seen.rateLimited.push(...wave.filter((t) => kindOf(t.exchange) === 'limited'));
    seen.stop =
      kinds.some((k) => k === 'refusal' || k === 'token-refused') || pacing.limitAs503 !== undefined;
    if (seen.stop || kinds.includes('limited') || kinds.includes('repeat')) break;
  }
  return seen;
}

/**
 * Sends waves of concurrent requests with the valid token to whoami and each tool it may call, each with a
 * share of the budget, until that endpoint meets a 429, another refusal (the burst ends) or its share is
 * spent. An endpoint that met a 429 has its limit waited out (the latest 429's wait) and is probed once
 * then, before the next endpoint is burst: every limited tool is judged, its own limit and Retry-After, and
 * a limit shared with an earlier endpoint has let calls through again before the next is burst (a tighter
 * limit of its own shows). A wait beyond --max-wait-seconds or the budget ends the burst there.
 * 429s are observed as they are; a 502/503/504 is retried (see `retryTransient`), so a transient failure is
 * told from one that persists. The budget counts the burst's own requests the gateway admitted; load shed
 * with 503 and a Retry-After lowers the burst's concurrency instead (`createShedPacing`); retries come on
 * top (three per 5xx at most).
 */
export function observeBurst(ctx: CheckContext): Promise<BurstObservation> {
  return ctx.memo('burst', async () => {
    const targets = ctx.servedEndpoints;
    const share = Math.max(1, Math.floor(ctx.rateLimitBudget / targets.length));
    const state = createBurstState(ctx);
    const limited: LimitedEndpoint[] = [];
    let lastWait = 0;
    for (const endpoint of targets) {
      // The next endpoint is burst only while the budget leaves room to wait out a limit like the last one.
      if (lastWait > 0 && ctx.now() + lastWait > ctx.client.deadline) {
        ctx.log(
          `  burst: no time left in the budget to wait out another limit of ${Math.ceil(lastWait / 1000)} s: ${endpoint.name} and the endpoints after it are not burst`,
        );
        break;
      }
      const seen = await burstEndpoint(ctx, state, endpoint, share);
      if (seen.rateLimited.length > 0) {
        // Each limit is waited out before the next endpoint is burst (a client calls again only once the
        // wait asked has passed), and probed then: whether its Retry-After told the truth.
        const { probe, waited, waitMs } = await waitOutLimit(ctx, endpoint, seen.rateLimited);
        lastWait = waitMs;
        limited.push({ endpoint, rateLimited: seen.rateLimited, ...(probe && { probe }) });
        if (!waited) {
          if (endpoint !== targets[targets.length - 1])
            ctx.log(
              `  burst: the wait ${endpoint.name}'s limit asked is beyond --max-wait-seconds or the time budget: the endpoints after it are not burst`,
            );
          break;
        }
      }
      if (seen.stop || state.pacing.exhausted) break;
    }
    state.end();
    const exchanges = await Promise.all(state.answers);
    const of = (kind: Kind) => exchanges.filter((t) => kindOf(t.exchange) === kind);
    const transient = exchanges.filter((t) => t.exchange.transientRetries > 0);
    const observation: BurstObservation = {
      exchanges,
      rateLimited: of('limited'),
      refusals: of('refusal'),
      transient,
      unsignalled: transient.filter((t) => !t.signalled && !isTransient(t.exchange.response.status)),
      serverErrors: of('server-error'),
      repeatRefused: of('repeat'),
      ...(state.pacing.limitAs503 && {
        limitAs503: {
          shed: state.pacing.limitAs503,
          servedBefore: state.pacing.admitted,
        },
      }),
      tokenRefused: of('token-refused').find((t) => !state.wronglyRefused.has(t.exchange)),
      limited,
      requests: exchanges.length,
      budget: ctx.rateLimitBudget,
    };
    const cleared = observation.transient.filter((t) => !isTransient(t.exchange.response.status)).length;
    const shed = transient.filter((t) => t.signalled).length;
    const lowered =
      shed > 0 ? `; shed, the burst lowered its concurrency to ${state.pacing.concurrency}` : '';
    const where = limited.length > 0 ? ` (429 on ${limited.map((l) => l.endpoint.name).join(', ')})` : '';
    ctx.log(
      `  burst: ${exchanges.length} requests (${targets.map((e) => e.name).join(', ')}): ${observation.rateLimited.length} answered 429${where}, ${observation.refusals.length} refused otherwise, ${observation.transient.length} 5xx at first (${shed} shed with 503 and Retry-After; ${cleared} cleared by a retry), ${observation.serverErrors.length} server errors that persisted${lowered}`,
    );
    return observation;
  });
}

/** The verdict when the burst met no 429: inconclusive, never a failure (limits may be higher than the budget). */
export function noRateLimitSeen(burst: BurstObservation) {
  if (burst.limitAs503) {
    // No budget of the user's would show a 429: the gateway signals its limit as 503 (the 429 rule fails).
    return {
      verdict: 'inconclusive' as const,
      message: `the limit answered 503 + Retry-After instead of 429 (ratelimit.burst-429 fails that rule): no 429 to judge; once the limit answers 429 this check can observe it`,
    };
  }
  if (burst.tokenRefused) {
    return {
      verdict: 'inconclusive' as const,
      unobserved: 'token-refused' as const,
      message: `the valid token was refused during the burst (401 invalid_identity_token) before any 429: did it expire? Give a --token-command, so the suite can get a fresh one`,
    };
  }
  const shed = burst.transient.filter((t) => t.signalled).length;
  const served = burst.requests - shed;
  const notCounted = shed > 0 ? ` (and ${shed} it shed with 503 + Retry-After, not counted)` : '';
  // How fast they came: a limit that refills faster than that is never met at this pace, whatever the budget.
  const times = burst.exchanges.map((t) => t.receivedAt);
  const seconds = times.length > 1 ? (Math.max(...times) - Math.min(...times)) / 1000 : 0;
  const pace =
    seconds >= 0.5
      ? `, answered over ${seconds.toFixed(1)} s (${Math.round((times.length - 1) / seconds)} a second: a limit that refills faster is not met at this pace, whatever the budget)`
      : '';
  return {
    verdict: 'inconclusive' as const,
    unobserved: 'rate-limit-budget' as const,
    message: `no 429 within ${served} requests the gateway served${notCounted} (--rate-limit-budget ${burst.budget})${pace}; raise the budget or lower the limit to check this`,
  };
}

/**
 * The burst's first answer that shows load shed with server errors instead of 429s: a 5xx that persisted,
 * or one of more unsignalled 5xx than a sporadic failure explains (nginx's limit_req answers a bare 503).
 * A 503 with Retry-After that a retry cleared is load shedding, not a limit: it is not counted.
 */
export function shedWithServerErrors(burst: BurstObservation): TimedExchange | undefined {
  if (burst.serverErrors[0]) return burst.serverErrors[0];
  return beyondSporadic(burst) ? burst.unsignalled[0] : undefined;
}

/**
 * A shell script that sends the burst again as the suite did (the same requests, in waves of 20 concurrent
 * ones, per endpoint) and counts the statuses: one curl cannot show what only a burst does. Tokens stay
 * in $TOKEN.
 */
export function burstScript(burst: BurstObservation): string {
  const byCall = new Map<string, { curl: string; count: number }>();
  for (const { exchange } of burst.exchanges) {
    const key = `${exchange.request.method} ${exchange.request.path}`;
    const entry = byCall.get(key);
    if (entry) entry.count += 1;
    else
      byCall.set(key, {
        curl: curlFor(exchange).replace(/^curl -sS -i/, "curl -sS -o /dev/null -w '%{http_code}\\n'"),
        count: 1,
      });
  }
  const lines = [
    `# The burst as the suite sent it (${burst.requests} requests, waves of ${WAVE} at once); prints how many got each status.`,
    '{',
  ];
  for (const [call, { curl, count }] of byCall) {
    // Full waves of WAVE, then the rest in a last, smaller wave: exactly `count` requests, as sent.
    const full = Math.floor(count / WAVE);
    const rest = count - full * WAVE;
    lines.push(`  # ${count} x ${call}`);
    if (full > 0)
      lines.push(
        `  for wave in $(seq 1 ${full}); do`,
        `    for i in $(seq 1 ${WAVE}); do ${curl} & done; wait`,
        '  done',
      );
    if (rest > 0) lines.push(`  for i in $(seq 1 ${rest}); do ${curl} & done; wait`);
  }
  lines.push('} | sort | uniq -c');
  return lines.join('\n');
}

/** A burst check failing on `exchange`: the message, with that exchange's curl and the script of the burst. */
export const burstFailure = (burst: BurstObservation, exchange: Exchange, message: string): CheckOutcome => ({
  verdict: 'fail',
  message,
  reproduction: { ...reproductionOf(exchange), script: burstScript(burst) },
});
