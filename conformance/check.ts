import fc from 'fast-check';
import type { ProtectedEndpointId } from '../spec/endpoints.ts';
import type { SpecRef } from '../spec/spec-ref.ts';
import type { ToolName } from '../spec/tools.ts';
import { reproductionOf } from './exchange-record.ts';
import type { Exchange, SuiteClient } from './http-client.ts';
import type { Level, Reproduction, Unobserved, Verdict } from './types.ts';

/** A protected endpoint as the suite calls it; tool bodies are configurable (their fields are "not shown"). */
export interface Endpoint {
  name: ProtectedEndpointId;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

/** Everything a check may use. */
export interface CheckContext {
  client: SuiteClient;
  has: { token: boolean; deniedToken: boolean; expiredToken: boolean; tier: boolean };
  endpoints: Record<Endpoint['name'], Endpoint>;
  /**
   * The calls the valid token must be served: whoami and the tools it may call (both, unless the user
   * narrowed them with --allowed-tools). Checks that need a served call use only these.
   */
  servedEndpoints: readonly Endpoint[];
  /** The tools the valid token may call (--allowed-tools; default both). */
  allowedTools: readonly ToolName[];
  /** The tool the denied token may not call. */
  deniedTool: ToolName;
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
  /**
   * After this time (on `now`'s clock) a property check sends no more generated cases than the one each
   * category always gets: its share of the time budget is spent (the gateway's limits made it wait).
   */
  caseDeadline?: number;
  /** Computes a shared observation once per run (the rate-limit checks share one burst). */
  memo<T>(key: string, compute: () => Promise<T>): Promise<T>;
  /** Waits (injectable, so the long waits can be tested without waiting). */
  sleep(ms: number): Promise<void>;
  log(line: string): void;
}

/** A tool of the spec (section 1), as the suite names it. */
export type { ToolName };

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
  needs?: ('token' | 'deniedToken' | 'expiredToken' | 'tier')[];
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
  "the gateway failed on its side, so this says nothing yet about the rule checked here: find the request in the gateway's logs (the reproduction sends it again) and make it succeed; the suite retries a 502, 503 or 504 up to 3 times (spec section 7), a 500 never";

/** What a failure says when the answer refused a repeated call as a duplicate, whatever the check is about. */
export const REPEAT_REFUSED_FIX =
  'the gateway refused a call it had seen before as a duplicate or conflict: that breaks retry safety (spec §4 rule 4: whoami, search and fetch are safe to repeat; retry.sequential judges that rule), not the rule checked here, which that answer could not show: answer a repeated call as the first was answered';

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
    return `Expected ${failure.expected}; got ${failure.actual}: a repeated call refused as a duplicate (spec §4 rule 4, retry safety). Fix: ${REPEAT_REFUSED_FIX}`;
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

/**
 * Settles what the unobserved cases of a check mean. A case rate-limited beyond the waits on a call the
 * gateway never served in this run is the gateway's doing (`not-served`: a failure); on a call it did
 * serve, the user's --max-wait-seconds was too short (`max-wait`: inconclusive).
 */
export function settleUnobserved(
  ctx: CheckContext,
  cases: readonly Inconclusive[],
): CheckOutcome | undefined {
  if (cases.length === 0) return undefined;
  const unserved = cases.find(
    (c) =>
      (c.reason === 'max-wait' || c.reason === 'retry-after-untruthful' || c.reason === 'time-budget') &&
      c.exchange &&
      !ctx.client.answered(c.exchange.key),
  );
  if (unserved?.exchange) {
    const exchange = unserved.exchange;
    const asked = exchange.retryAfterUntruthful
      ? ` (after ${exchange.attempts} attempts, each waiting the Retry-After it asked: not truthful)`
      : exchange.retryAfterMs !== undefined
        ? ` (Retry-After ${Math.ceil(exchange.retryAfterMs / 1000)} s, beyond --max-wait-seconds ${ctx.maxWaitSeconds})`
        : ` (still so after ${exchange.attempts} attempts with backoff)`;
    return {
      verdict: 'fail',
      unobserved: 'not-served',
      message: `Expected the gateway to answer ${describeCall(exchange)} at least once in the run; every answer was 429${asked}, so this check could observe nothing. Fix: a gateway that serves nothing cannot pass; if a previous run used up the quota, run again once it has recovered`,
      reproduction: reproductionOf(exchange),
    };
  }
  const first = cases[0] as Inconclusive;
  const hint =
    first.reason === 'max-wait'
      ? '; raise --max-wait-seconds (the gateway served these calls earlier in the run)'
      : '';
  return {
    verdict: 'inconclusive',
    unobserved: first.reason,
    message: `${cases.length} case(s) could not be observed: ${first.message}${hint}`,
  };
}

/** The `code` of a JSON error body, if any. */
export const codeOf = (exchange: Exchange): unknown =>
  (exchange.response.json as { code?: unknown } | undefined)?.code;

/**
 * Runs a fast-check property whose body sends real requests. A CheckFailure fails the check with the
 * shrunk counterexample, its curl reproduction and the seed and path that replay it; Inconclusive cases
 * make the check inconclusive (never a silent pass); anything else is reported as a suite error.
 */
export async function checkProperty<T>(
  ctx: CheckContext,
  arbitrary: fc.Arbitrary<T>,
  body: (value: T) => Promise<void>,
  options: { numRuns?: number; passMessage?: (runs: number) => string } = {},
): Promise<CheckOutcome> {
  const inconclusive: Inconclusive[] = [];
  const started = ctx.now();
  // The first case always goes; the others while the check's share of the time budget lasts (a gateway
  // with tight limits gets fewer cases, each kind of input still tried, rather than a check given up).
  const until = Math.min(ctx.caseDeadline ?? Number.POSITIVE_INFINITY, started + ctx.timeLimitMs);
  let sent = 0;
  let notSent = 0;
  const property = fc.asyncProperty(arbitrary, async (value) => {
    if (sent > 0 && ctx.now() > until && !ctx.path) {
      notSent += 1;
      return;
    }
    sent += 1;
    try {
      await body(value);
    } catch (error) {
      if (error instanceof Inconclusive) {
        inconclusive.push(error);
        return;
      }
      throw error;
    }
  });
  const numRuns = options.numRuns ?? ctx.numRuns;
  const details = await fc.check(property, {
    seed: ctx.seed,
    numRuns,
    path: ctx.path,
  });
  if (details.failed && details.errorInstance instanceof CheckFailure) {
    const failure = details.errorInstance;
    const repeatRefused = repeatRefusalOf(failure);
    return {
      verdict: 'fail',
      message: failureMessage(failure),
      ...(failure.unobserved && { unobserved: failure.unobserved }),
      ...(repeatRefused && { repeatRefused }),
      reproduction: {
        ...(failure.exchange ? reproductionOf(failure.exchange) : { curl: undefined }),
        seed: details.seed,
        path: details.counterexamplePath ?? undefined,
        counterexample: fc.stringify(details.counterexample),
      },
    };
  }
  if (details.failed && details.errorInstance) {
    const error = details.errorInstance;
    if (error instanceof Error && error.name === 'TokenCommandError') throw error;
    return {
      verdict: 'inconclusive',
      unobserved: 'suite-error',
      message: `the check could not run: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const unobserved = settleUnobserved(ctx, inconclusive);
  if (unobserved) return unobserved;
  const held = sent - inconclusive.length;
  const fewer =
    notSent > 0
      ? ` (${notSent} more not sent: this check's share of the time budget, ${Math.ceil((until - started) / 1000)} s, went on waiting out the gateway's rate limits)`
      : '';
  return {
    verdict: 'pass',
    message: `${options.passMessage?.(held) ?? `held for ${held} generated cases`}${fewer}`,
    cases: { held, notSent },
  };
}

/**
 * Runs one property per labelled category, splitting the cases between them, so every category is
 * exercised on every run (a fault that only long tokens trigger, or only on one endpoint, is never missed
 * by chance). A counterexample in any category decides; its replay path is prefixed with the label, e.g.
 * `long@whoami:3:1`. Labels must not contain ':'.
 */
export async function checkEach<T>(
  ctx: CheckContext,
  categories: Record<string, fc.Arbitrary<T>>,
  body: (value: T, category: string) => Promise<void>,
  options: { runsPerCategory?: number } = {},
): Promise<CheckOutcome> {
  const labels = Object.keys(categories);
  const [replayLabel, ...rest] = ctx.path?.split(':') ?? [];
  const selected = ctx.path ? labels.filter((l) => l === replayLabel) : labels;
  const numRuns = options.runsPerCategory ?? Math.max(2, Math.ceil(ctx.numRuns / labels.length));
  const outcomes: CheckOutcome[] = [];
  for (const label of selected) {
    const sub = { ...ctx, path: ctx.path ? rest.join(':') : undefined };
    const outcome = await checkProperty(
      sub,
      categories[label] as fc.Arbitrary<T>,
      (value) => body(value, label),
      { numRuns },
    );
    if (outcome.verdict === 'fail') {
      if (outcome.reproduction?.path) outcome.reproduction.path = `${label}:${outcome.reproduction.path}`;
      outcome.message = `[${label}] ${outcome.message}`;
      // A counterexample is the strongest verdict: a category that was merely never served waits.
      if (!outcome.unobserved) return outcome;
    }
    outcomes.push(outcome);
  }
  const unsure =
    outcomes.find((o) => o.verdict === 'fail') ?? outcomes.find((o) => o.verdict === 'inconclusive');
  if (unsure) return unsure;
  const held = outcomes.reduce((n, o) => n + (o.cases?.held ?? numRuns), 0);
  const notSent = outcomes.reduce((n, o) => n + (o.cases?.notSent ?? 0), 0);
  const fewer =
    notSent > 0
      ? `; ${notSent} more not sent: the check's share of the time budget went on waiting out the gateway's rate limits`
      : '';
  return {
    verdict: 'pass',
    message:
      notSent > 0
        ? `held for ${held} case(s), at least one in each of ${selected.length} categories (${selected.join(', ')})${fewer}`
        : `held for ${numRuns} case(s) in each of ${selected.length} categories (${selected.join(', ')})`,
    cases: { held, notSent },
  };
}

/**
 * Runs a check body once, without generated input (a fixed sequence of calls), with the same verdicts as
 * checkProperty: a CheckFailure fails (with the curl reproduction), an Inconclusive settles as for a
 * property (never served: a failure; a budget: inconclusive).
 */
export async function checkOnce(ctx: CheckContext, body: () => Promise<string>): Promise<CheckOutcome> {
  try {
    return { verdict: 'pass', message: await body() };
  } catch (error) {
    if (error instanceof CheckFailure) {
      const repeatRefused = repeatRefusalOf(error);
      return {
        verdict: 'fail',
        message: failureMessage(error),
        ...(error.unobserved && { unobserved: error.unobserved }),
        ...(repeatRefused && { repeatRefused }),
        ...(error.exchange && { reproduction: reproductionOf(error.exchange) }),
      };
    }
    if (error instanceof Inconclusive) return settleUnobserved(ctx, [error]) as CheckOutcome;
    throw error;
  }
}
