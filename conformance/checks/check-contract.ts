import { SPEC_ENDPOINTS, type SpecEndpointId } from '../../vocabulary/endpoints.ts';
import type { SpecRef } from '../../vocabulary/spec-ref.ts';
import { SPEC_TOOL_NAMES } from '../../vocabulary/tools.ts';
import { carriedIdempotencyKey, IDEMPOTENCY_KEY_HEADER } from '../client/client-idempotency-key.ts';
import type { SuiteClient } from '../client/http-client.ts';
import type { Level, Reproduction, Unobserved, Verdict } from '../model/check-result.ts';
import type { Exchange } from '../model/suite-request.ts';

/**
 * A protected endpoint as the suite calls it: whoami, or a tool the gateway declares (the spec's two by
 * default); tool bodies are configurable (their fields are "not shown").
 */
export interface Endpoint {
  /** `whoami` or the tool's name. */
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** A write-like tool (declared so): called with an idempotency key, judged for that (spec §7). */
  writeLike?: boolean;
}

/** Everything a check may use. */
export interface CheckContext {
  client: SuiteClient;
  has: { token: boolean; deniedToken: boolean; expiredToken: boolean; revokedToken: boolean; tier: boolean };
  /** The protected endpoints by name: whoami first, then the tools checked, in their order. */
  endpoints: Readonly<Record<string, Endpoint>> & { readonly whoami: Endpoint };
  /** The tools the gateway declares (--tool; default web.search and web.fetch): the only ones called. */
  tools: readonly Endpoint[];
  /**
   * The calls the valid token must be served: whoami and the tools it may call (all, unless the user
   * narrowed them with --allowed-tools). Checks that need a served call use only these.
   */
  servedEndpoints: readonly Endpoint[];
  /** The tools the valid token may call (--allowed-tools; default every tool checked). */
  allowedTools: readonly CheckedToolName[];
  /** The tool the denied token may not call (one of `tools`). */
  deniedTool: CheckedToolName;
  /** The tiers whoami must show for the valid and the denied token (--tier, --denied-tier), when given. */
  tier?: string;
  deniedTier?: string;
  rateLimitBudget: number;
  maxWaitSeconds: number;
  /**
   * Longest Retry-After honoured once, by authz.allowed-calls-served, before a call is judged never
   * served (a gateway whose quota a previous run used up is not failed for it).
   */
  longWaitSeconds: number;
  seed: number;
  numRuns: number;
  /** Replays one counterexample (with `seed`) instead of generating. */
  path?: string;
  /** Longest time one check may generate cases for (on the suite's clock). */
  timeLimitMs: number;
  /** The suite's clock (real time, or a test's virtual one). */
  now(): number;
  /** The run's time budget (--time-budget-seconds, in ms). */
  timeBudgetMs?: number;
  /**
   * After this time (on `now`'s clock) a property check sends no more generated cases than the one each
   * category always gets: its share of the time budget is spent (the gateway's limits made it wait).
   */
  caseDeadline?: number;
  /**
   * Once the suite's client has waited more than this (ms) during the check, a property check sends no
   * more generated cases than the ones it always sends: the run plans its budget from the limits it has
   * seen (a slow window gets fewer probes; every check still runs).
   */
  caseWaitAllowanceMs?: number;
  /**
   * Whether the gateway's limit on an endpoint has a slow window (a 429 to it asked a wait of
   * SLOW_WINDOW_MS or more): checks then send it the fewest calls that still show their rule.
   */
  slow?(endpoint: Endpoint): boolean;
  /** Computes a shared observation once per run (the rate-limit checks share one burst). */
  memo<T>(key: string, compute: () => Promise<T>): Promise<T>;
  /** Waits (injectable, so the long waits can be tested without waiting). */
  sleep(ms: number): Promise<void>;
  log(line: string): void;
}

/**
 * The name of a tool the suite checks: one of the spec's (section 1: web.search, web.fetch) or any one a
 * gateway declares (`--tool NAME=PATH`), so any string. Not `ToolName` (vocabulary/tools.ts), which names
 * only the tools this project's vocabulary declares.
 */
export type CheckedToolName = string;

export type CheckOutcome = {
  verdict: Verdict;
  message: string;
  reproduction?: Reproduction;
  /** Why the check could not observe what it needs (inconclusive, or a not-served failure). */
  unobserved?: Unobserved;
  /** For a property check: the cases it observed, and those it did not send for want of time. */
  cases?: { held: number; notSent: number };
  /**
   * The failure was a repeated call refused as a duplicate (409 or a duplicate code): a break of retry
   * safety (§4 rule 4), not of this check's rule. The runner reports it under retry.sequential too.
   */
  repeatRefused?: Exchange;
  /**
   * The failing answer refused one of the suite's real tokens, unaltered (401 invalid_identity_token): when
   * auth.valid-token-accepted finds the gateway accepted that token around it, the runner says so here too.
   */
  realTokenRefused?: boolean;
};

/** A conformance check: a small named unit tied to a spec section. */
export interface Check {
  /** Stable id, e.g. `auth.missing-token`: CI filters and reports use it. */
  id: string;
  title: string;
  /** The spec sections and rules it enforces, e.g. `[{ section: 5, rules: [3] }]` (§5 rule 3). */
  specRef: SpecRef;
  level: Level;
  /** What the target must provide; without it the check is skipped, naming the missing option. */
  needs?: ('token' | 'deniedToken' | 'expiredToken' | 'revokedToken' | 'tier')[];
  run(ctx: CheckContext): Promise<CheckOutcome>;
}

/** A broken rule: what the spec expects, what the gateway did, and how to fix it. */
export class CheckFailure extends Error {
  readonly expected: string;
  readonly actual: string;
  readonly fix: string;
  readonly exchange?: Exchange;
  /** The rule is about server errors itself (e.g. "never a 5xx for bad input"): keep its fix for a 5xx. */
  readonly aboutServerErrors: boolean;
  /** Set when the failure is that the gateway never served what the check needs. */
  readonly unobserved?: Unobserved;
  /** The rule is about repeated calls itself (retry safety): keep its fix for a 409 / duplicate. */
  readonly aboutRepeats: boolean;

  constructor(details: {
    expected: string;
    actual: string;
    fix: string;
    exchange?: Exchange;
    aboutServerErrors?: boolean;
    aboutRepeats?: boolean;
    unobserved?: Unobserved;
  }) {
    super(`expected ${details.expected}; got ${details.actual}`);
    this.name = 'CheckFailure';
    this.expected = details.expected;
    this.actual = details.actual;
    this.fix = details.fix;
    this.exchange = details.exchange;
    this.aboutServerErrors = details.aboutServerErrors ?? false;
    this.aboutRepeats = details.aboutRepeats ?? false;
    this.unobserved = details.unobserved;
  }
}

/** What a failure says when the gateway's answer was a server error, whatever the check is about. */
export const SERVER_ERROR_FIX =
  "the gateway failed on its side, so this says nothing yet about the rule checked here: find the request in the gateway's logs (the reproduction sends it again) and make it succeed; the suite retries any 5xx up to 3 times with backoff (spec section 7 calls every 5xx transient) before judging it";

/** The operations section 4 rule 4 names safe to retry: whoami and the spec's tools. */
export const SPEC_RETRY_SAFE: readonly string[] = ['whoami', ...SPEC_TOOL_NAMES];

/** Whether a call is one section 4 rule 4 names safe to retry: whoami or a spec tool, at the spec's paths. */
const specSafeToRetry = (method: string, path: string) =>
  SPEC_RETRY_SAFE.map((id) => SPEC_ENDPOINTS[id as SpecEndpointId]).some(
    (e) => e.method === method && e.path === path,
  );

/**
 * How to fix a repeated call refused as a duplicate, naming the operation at hand: whoami, search and fetch
 * must be safe to retry (§4 rule 4); a write-like tool (sent with its idempotency key) must answer a repeat
 * carrying the first call's key as the first; any other tool either, or is to be declared write-like.
 *
 * @example
 * repeatRefusedFix({ method: 'POST', path: '/v1/web/snapshot', name: 'web.snapshot' });
 * // "POST /v1/web/snapshot (web.snapshot) is not an operation ... declare it: --tool web.snapshot:write-like=/v1/web/snapshot ..."
 */
export function repeatRefusedFix(call: {
  method: string;
  path: string;
  name?: string;
  writeLike?: boolean;
}): string {
  const operation = `${call.method} ${call.path}${call.name ? ` (${call.name})` : ''}`;
  if (call.writeLike)
    return `answer a repeat of ${operation} that carries the first call's ${IDEMPOTENCY_KEY_HEADER} as the first was answered (replay it; spec §7, draft-ietf-httpapi-idempotency-key-header): a write-like tool may refuse a repeat without the key, never one with it`;
  if (specSafeToRetry(call.method, call.path))
    return `make ${operation} safe to retry (spec §4 rule 4 names whoami, search and fetch): answer a repeated call as the first was answered, with no conflict or duplicate error`;
  const name = call.name ?? 'NAME';
  return `${operation} is not one the spec names safe to retry: make it answer a repeat as the first, or, if it is write-like (spec §7: the client sends an idempotency key), declare it so (--tool ${name}:write-like=${call.path}, or x-write-like: true in its OpenAPI operation) and the suite calls it with an ${IDEMPOTENCY_KEY_HEADER}, judging that a repeat with the key is safe`;
}

/** What a failure says when the answer refused a repeated call as a duplicate, whatever the check is about. */
export function repeatRefusedMessage(exchange: Exchange): string {
  const call = {
    method: exchange.request.method,
    path: exchange.request.path,
    writeLike: carriedIdempotencyKey(exchange),
  };
  return `the gateway refused a call it had seen before as a duplicate or conflict: that breaks retry safety (retry.sequential judges that rule), not the rule checked here, which that answer could not show: ${repeatRefusedFix(call)}`;
}

/** Whether an answer refuses a call as a repeat: 409, or an error whose code says duplicate or conflict. */
export function isRepeatRefusal(exchange: Exchange): boolean {
  const { status } = exchange.response;
  const code = (exchange.response.json as { code?: unknown } | undefined)?.code;
  return status === 409 || (status >= 400 && /duplicate|conflict|already/i.test(String(code ?? '')));
}

/** The answer of a failure that is a repeat refused as a duplicate, when its check is not about repeats. */
export function repeatRefusalOf(failure: CheckFailure): Exchange | undefined {
  const exchange = failure.exchange;
  return exchange && !failure.aboutRepeats && isRepeatRefusal(exchange) ? exchange : undefined;
}

/** Whether an answer is a server error or no answer at all. */
export const isServerError = (status: number) => status === 0 || status >= 500;

/**
 * The message of a failure: "Expected ...; got ...  Fix: ...". When the answer was a 5xx or a dropped
 * connection it says so (possibly transient), and the fix is about that rather than the check's topic.
 */
export function failureMessage(failure: CheckFailure): string {
  const exchange = failure.exchange;
  if (exchange && repeatRefusalOf(failure)) {
    return `Expected ${failure.expected}; got ${failure.actual}: a repeated call refused as a duplicate (spec §4 rule 4, retry safety). Fix: ${repeatRefusedMessage(exchange)}`;
  }
  if (!exchange || !isServerError(exchange.response.status)) {
    return `Expected ${failure.expected}; got ${failure.actual}. Fix: ${failure.fix}`;
  }
  const retried =
    exchange.transientRetries > 0 ? `, still so after ${exchange.transientRetries} retries` : '';
  const what = exchange.response.status === 0 ? 'no answer' : 'a server error';
  return `Expected ${failure.expected}; got ${failure.actual}: ${what} (possibly transient${retried}). Fix: ${failure.aboutServerErrors ? failure.fix : SERVER_ERROR_FIX}`;
}

/** The case could not be observed (e.g. rate-limited past the retry cap): neither pass nor fail by itself. */
export class Inconclusive extends Error {
  readonly reason: Unobserved;
  /** The unanswered request, when there is one (to judge whether the gateway ever served it). */
  readonly exchange?: Exchange;

  constructor(message: string, reason: Unobserved = 'max-wait', exchange?: Exchange) {
    super(message);
    this.name = 'Inconclusive';
    this.reason = reason;
    this.exchange = exchange;
  }
}

/** One line describing a response, for failure messages. Only an error's `code` is an error code. */
export function describeResponse(exchange: Exchange): string {
  const { response } = exchange;
  if (response.status === 0) return `no response (${response.error ?? 'connection failed'})`;
  const code = (response.json as { code?: unknown } | undefined)?.code;
  const type = response.headers['content-type'] ?? 'no content-type';
  const body =
    typeof code === 'string' && response.status >= 400
      ? `code ${JSON.stringify(code.slice(0, 120))}`
      : `body ${JSON.stringify(response.text.slice(0, 120))}`;
  return `${response.status} (${type}) with ${body}`;
}

/** "GET /v1/whoami with the valid token": a call as a person reads it. */
export function describeCall(exchange: Exchange): string {
  const { method, path } = exchange.request;
  const token =
    exchange.credential === 'none'
      ? 'without a token'
      : exchange.credential === 'bad'
        ? 'with a bad token'
        : `with the ${exchange.credential} token`;
  return `${method} ${path} ${token}`;
}

/** Raises Inconclusive when the client gave up on a 429 (the suite's own traffic was rate-limited). */
export function observed(exchange: Exchange): Exchange {
  if (exchange.rateLimitExhausted && exchange.retryAfterUntruthful) {
    throw new Inconclusive(
      `${describeCall(exchange)} was still rate-limited after ${exchange.attempts} attempts, each sent once the Retry-After its 429 asked for (${Math.ceil((exchange.retryAfterMs ?? 0) / 1000)} s) had passed: the gateway's Retry-After is not truthful (spec §7; ratelimit.retry-after-honoured judges that rule), and raising --max-wait-seconds will not help`,
      'retry-after-untruthful',
      exchange,
    );
  }
  if (exchange.rateLimitExhausted && exchange.timeBudgetExhausted) {
    const asked =
      exchange.retryAfterMs !== undefined
        ? ` (its 429 asked for ${Math.ceil(exchange.retryAfterMs / 1000)} s)`
        : '';
    throw new Inconclusive(
      `${describeCall(exchange)} was still rate-limited${asked}, and waiting it out would overrun the run's time budget (--time-budget-seconds)`,
      'time-budget',
      exchange,
    );
  }
  if (exchange.rateLimitExhausted) {
    const asked =
      exchange.retryAfterMs !== undefined
        ? `its 429 asked for ${Math.ceil(exchange.retryAfterMs / 1000)} s`
        : `it still answered 429 after ${exchange.attempts} attempts`;
    throw new Inconclusive(
      `${describeCall(exchange)} was still rate-limited (${asked}; the suite waits at most --max-wait-seconds each time)`,
      'max-wait',
      exchange,
    );
  }
  return exchange;
}

/** The `code` of a JSON error body, if any. */
export const codeOf = (exchange: Exchange): unknown =>
  (exchange.response.json as { code?: unknown } | undefined)?.code;
