import type { SuiteClock } from '../model/suite-clock.ts';
import {
  callKey,
  credentialOf,
  type Exchange,
  type SuiteRequest,
  type SuiteResponse,
} from '../model/suite-request.ts';
import type { createTokenLedger } from '../tokens/token-ledger.ts';
import {
  askedWaitOf,
  backoffMs,
  type createWaitFloors,
  FIRST_LIE_FLOOR_MS,
  isTransient,
  MAX_TRANSIENT_RETRIES,
  retryAfterOf,
  scopeOf,
} from './client-pacing.ts';
import type { ClientTokens } from './client-token.ts';
import { refusedRealToken, requestHeaders } from './client-token.ts';
import type { ClientWaits } from './client-waits.ts';
import type { createTransport } from './http-transport.ts';
import { exhaustedWaitMs, rateLimitHint } from './rate-limit-headers.ts';
import type { createShortWaits } from './short-waits.ts';

/* One request of the suite client (http-client.ts) from first attempt to final exchange: each attempt sent
 * and recorded, then the retry decisions in turn (refused real token, transient failure, 429). */

/** Whether an answer counts as the gateway serving the call: anything but a 429, a 5xx or no answer. */
export const isAnswer = (status: number) => status >= 200 && status < 500 && status !== 429;

/** What the client keeps across requests (http-client.ts builds it). */
export interface ClientCore {
  base: URL;
  tokens: ClientTokens;
  maxWaitSeconds: number;
  maxRetries: number;
  noWaitRetries: number;
  clock: SuiteClock;
  log: (line: string) => void;
  counts: { requests: number; answers: number };
  retryServerErrors: boolean;
  transport: ReturnType<typeof createTransport>;
  waits: ClientWaits;
  floors: ReturnType<typeof createWaitFloors>;
  ledger: ReturnType<typeof createTokenLedger>;
  answered: Set<string>;
  seen429: Exchange[];
  /** The run's answers in order, and retries that met a 429 again after waiting what was asked. */
  shortWaits: ReturnType<typeof createShortWaits>;
  remaining: Map<string, number>;
  /** Per call (method and path), the longest wait a 429 asked of it (ms): how slow its limit's window is. */
  longestAsked: Map<string, number>;
  /** Per call (method and path), the last retry admitted once the wait its 429 asked had passed. */
  honoured: Map<string, { asked: Exchange; admitted: Exchange }>;
}

export type SendOptions = { raw?: boolean; observe429?: boolean; noRefresh?: boolean };

/** One request's progress across its attempts. */
function startCall(core: ClientCore, request: SuiteRequest) {
  const credential = credentialOf(request);
  return {
    request,
    // Paths are relative to the base URL, path prefix included (spec section 4): a gateway may be
    // mounted under one (`https://api.example/tenant-a`).
    url: new URL(`${core.base.href.replace(/\/+$/, '')}${request.path}`),
    key: callKey(request),
    credential,
    scope: scopeOf(credential),
    what: `${request.method} ${request.path}`,
    attempts: 0,
    transientRetries: 0,
    transientStatus: undefined as number | undefined,
    refreshed: false,
    resent: 0,
    retryAfterWaits: 0,
    /** The scope's count of sends when this request's last 429 arrived (-1 before any). */
    quiet: -1,
    /** The last 429 whose asked wait this request is waiting out before its next attempt (its answer number). */
    waiting: undefined as { exchange: Exchange; askedMs: number; answerNo: number } | undefined,
    /**
     * This request's own floor under asked waits: once a retry that waited what was asked met a 429 again,
     * no admitted call of the suite's explaining it, the next wait is at least twice the wait asked (or the
     * floor, when higher): 1 s after a "0", doubling.
     */
    ownFloor: 0,
  };
}
type Call = ReturnType<typeof startCall>;
type Attempt = Awaited<ReturnType<typeof attemptOnce>>;

/**
 * Sends a request; the client backs off and retries a 429 (and a 502/503/504) under the caps. With
 * `observe429`, a 429 is returned as is, a transient failure still retried; with `raw`, the first answer.
 */
export async function sendRequest(
  core: ClientCore,
  request: SuiteRequest,
  sendOptions: SendOptions = {},
): Promise<Exchange> {
  const call = startCall(core, request);
  for (;;) {
    call.attempts += 1;
    // A call that observes the limit (the burst) goes as it is; any other waits out what was asked.
    if (!sendOptions.raw && !sendOptions.observe429) await core.waits.paced(call.scope, call.what);
    const attempt = await attemptOnce(core, call);
    if (await triesTokenAgain(core, call, attempt, sendOptions)) continue;
    if (sendOptions.raw) return attempt.exchange(false);
    if (await retriesTransient(core, call, attempt)) continue;
    if (attempt.response.status !== 429 || sendOptions.observe429) return attempt.exchange(false);
    const exhausted = await retries429(core, call, attempt);
    if (exhausted) return exhausted;
  }
}

/** One attempt: sent with its token, counted in its scope, and recorded (gates, 429s, the token ledger). */
async function attemptOnce(core: ClientCore, call: Call) {
  const { request, credential, scope, what } = call;
  const { headers, redactedHeaders, sentValue, tokenTransform } = await requestHeaders(core.tokens, request);
  const sentAfter = core.counts.answers;
  const tokenId =
    sentValue !== undefined && (credential === 'valid' || credential === 'denied')
      ? core.ledger.idOf(sentValue)
      : undefined;
  // Alone in its scope since its last answer (nothing sent, nothing in flight): a 429 then is no sibling's.
  const inScope = core.floors.traffic(scope);
  const alone = call.quiet === inScope.sent && inScope.inFlight === 0;
  const waited = call.waiting;
  call.waiting = undefined;
  inScope.sent += 1;
  inScope.inFlight += 1;
  core.counts.requests += 1;
  const sentNo = core.counts.requests;
  const sending = core.transport.send(call.url, request.method, headers, request.body);
  const response = await (core.clock.busy?.(sending) ?? sending);
  inScope.inFlight -= 1;
  core.counts.answers += 1;
  const answerNo = core.counts.answers;
  core.shortWaits.answered(sentNo, response.status);
  if (isAnswer(response.status)) core.answered.add(call.key);
  const now = core.clock.now();
  const hint = rateLimitHint(response.headers, now);
  if (hint.remaining !== undefined) core.remaining.set(scope, hint.remaining);
  const asked = response.status === 429 ? askedWaitOf(response, now) : undefined;
  if (response.status === 429 && asked !== undefined)
    core.longestAsked.set(what, Math.max(asked, core.longestAsked.get(what) ?? 0));
  if (response.status === 429) {
    const lied = alone && inScope.sent === call.quiet + 1 && call.retryAfterWaits === call.attempts - 1;
    if (lied && call.attempts > 1) core.floors.raise(scope);
    call.quiet = inScope.sent;
  }
  learnGate(core, scope, what, response, asked, now);
  const exchange = (rateLimitExhausted: boolean): Exchange => ({
    request,
    url: call.url.href,
    credential,
    key: call.key,
    ...(tokenId !== undefined && { tokenId }),
    sentHeaders: redactedHeaders,
    tokenTransform,
    response,
    attempts: call.attempts,
    rateLimitExhausted,
    ...(rateLimitExhausted && { retryAfterMs: askedWaitOf(response, now) }),
    transientRetries: call.transientRetries,
    ...(call.transientStatus !== undefined && { transientStatus: call.transientStatus }),
  });
  if (waited && isAnswer(response.status))
    core.honoured.set(what, { asked: waited.exchange, admitted: exchange(false) });
  if (response.status === 429) {
    core.seen429.push(exchange(false));
    // A retry that waited what was asked met a 429 again, and no admitted call of the suite's explains it:
    // this call backs off more from now on (twice its last wait), and the client keeps the evidence.
    const again = exchange(false);
    const proven =
      waited &&
      core.shortWaits.metAgain({
        asked: waited.exchange,
        askedMs: waited.askedMs,
        again,
        after: waited.answerNo,
        sentBy: core.counts.requests,
        answerNo,
      });
    if (waited && proven)
      call.ownFloor = Math.min(
        core.maxWaitSeconds * 1000,
        Math.max(FIRST_LIE_FLOOR_MS, 2 * Math.max(call.ownFloor, waited.askedMs)),
      );
  }
  if (sentValue !== undefined && tokenId !== undefined)
    core.ledger.record(sentValue, credential, { exchange: exchange(false), sentAfter, answerNo });
  return { response, asked, now, sentValue, exchange, answerNo };
}

/** Gates the scope for what the answer asked: a 429's (floored) wait, or no request left until a reset. */
function learnGate(
  core: ClientCore,
  scope: string,
  what: string,
  response: SuiteResponse,
  asked: number | undefined,
  now: number,
) {
  core.waits.learn(
    scope,
    response.status === 429
      ? core.waits.floored(scope, asked)
      : exhaustedWaitMs(response.status, response.headers, now),
    response.status === 429
      ? `the gateway answered ${what} 429${asked !== undefined ? ` and asked for ${Math.ceil(asked / 1000)} s` : ''}`
      : `the gateway said no request is left (rate-limit headers on ${what})`,
  );
}

/** A real token refused 401: refreshed once (a token command), else resent if the gateway accepted it before. */
async function triesTokenAgain(core: ClientCore, call: Call, attempt: Attempt, sendOptions: SendOptions) {
  const { request } = call;
  if (!refusedRealToken(request, attempt.response, call.resent, sendOptions.noRefresh)) return false;
  if (request.token?.kind !== 'derived') return false;
  if (!call.refreshed && (await core.tokens[request.token.from]?.refresh())) {
    call.refreshed = true;
    return true;
  }
  call.refreshed = true;
  // A fixed token the gateway accepted before is resent, twice at most (§5 rule 3: "resend"): one
  // instance may refuse what the others accept. The ledger keeps every answer; auth.valid-token-accepted
  // judges them.
  if (attempt.sentValue !== undefined && core.ledger.everAccepted(attempt.sentValue)) {
    call.resent += 1;
    await core.waits.pause(backoffMs(1), '');
    return true;
  }
  return false;
}

/**
 * A transient server failure (spec section 7: retry with backoff): a gateway may have one now and then, and
 * the checks judge the outcome, not the hiccup. One that keeps failing is observed.
 */
async function retriesTransient(core: ClientCore, call: Call, { response, now }: Attempt) {
  if (
    !core.retryServerErrors ||
    !isTransient(response.status) ||
    call.transientRetries >= MAX_TRANSIENT_RETRIES
  )
    return false;
  const planned = core.waits.waitFor(retryAfterOf(response, now), call.transientRetries + 1);
  if (!('wait' in planned)) return false;
  call.transientRetries += 1;
  call.transientStatus ??= response.status;
  core.log(
    `  ${response.status} from ${call.what}: retrying in ${(planned.wait / 1000).toFixed(1)} s (transient failure ${call.transientRetries}/${MAX_TRANSIENT_RETRIES})`,
  );
  await core.waits.pause(planned.wait, `retrying ${call.what} after a ${response.status}`);
  return true;
}

/** A 429: waited out under the retry cap (undefined: try again), else the exhausted exchange, said why. */
async function retries429(core: ClientCore, call: Call, { asked, exchange, answerNo }: Attempt) {
  const { attempts, scope, what } = call;
  const cap = asked === undefined ? core.noWaitRetries : core.maxRetries;
  const scopeFloor = core.floors.floorOf(scope);
  const floorMs = Math.max(scopeFloor, call.ownFloor);
  const planned = attempts <= cap ? core.waits.waitFor(asked, attempts, floorMs) : undefined;
  if (!planned || 'refused' in planned) {
    const untruthful =
      attempts > cap &&
      call.retryAfterWaits === attempts - 1 &&
      asked !== undefined &&
      asked <= core.maxWaitSeconds * 1000;
    const overBudget = planned !== undefined && planned.refused === 'time-budget';
    return {
      ...exchange(true),
      ...(untruthful && { retryAfterUntruthful: true }),
      ...(overBudget && { timeBudgetExhausted: true }),
    };
  }
  if (asked !== undefined) {
    call.retryAfterWaits += 1;
    call.waiting = { exchange: exchange(false), askedMs: asked, answerNo };
  }
  const own =
    asked === undefined || floorMs <= asked
      ? ''
      : scopeFloor >= call.ownFloor
        ? `; the suite waits at least ${(floorMs / 1000).toFixed(0)} s, as this gateway's earlier waits proved too short`
        : `; the suite waits at least ${(floorMs / 1000).toFixed(0)} s, as this call met a 429 again after waiting what was asked`;
  await core.waits.pause(
    planned.wait,
    `the gateway answered ${what} 429${asked !== undefined ? ` and asked for ${Math.ceil(asked / 1000)} s` : ' (no wait asked: backing off)'}${own} (attempt ${attempts}/${cap + 1})`,
  );
  return undefined;
}
