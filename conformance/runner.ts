import { SPEC_ENDPOINTS } from '../spec/endpoints.ts';
import { TOOL_NAMES, TOOLS as TOOLS_OF_SPEC } from '../spec/tools.ts';
import {
  type Check,
  type CheckContext,
  type CheckOutcome,
  describeCall,
  describeResponse,
  type Endpoint,
  type ToolName,
} from './check.ts';
import { CHECKS } from './checks/index.ts';
import { DENIED_TOKEN, TOOLS, VALID_TOKEN } from './checks/support.ts';
import { reproductionOf } from './exchange-record.ts';
import { createSuiteClient, type Exchange, REAL_CLOCK, type SuiteClock } from './http-client.ts';
import { redactTokens } from './redact.ts';
import { staticToken, TokenCommandError, type TokenSource } from './token-source.ts';
import type { CheckResult, ExchangeRecord, Reproduction, Unobserved } from './types.ts';
import { blockingUnobserved } from './unobserved.ts';

/** The tool the denied token is tried on unless told otherwise: the spec's first, web.search. */
export const DEFAULT_DENIED_TOOL: ToolName = TOOL_NAMES[0];

export interface ConformanceOptions {
  /** The gateway's base URL, e.g. `https://staging.example.com` (paths under /v1 are appended). */
  baseUrl: string;
  /**
   * A valid identity token allowed to call both tools (narrow with `allowedTools`): a string, or a
   * source such as `commandToken(cmd, '$TOKEN')`.
   */
  token?: string | TokenSource;
  /**
   * The tools `token` may call (default both). A tool left out is not called with it, and the checks
   * say so: it is skipped, never passed.
   */
  allowedTools?: readonly ToolName[];
  /** A valid token that may not call `deniedTool`. Without it the authorization checks are skipped. */
  deniedToken?: string | TokenSource;
  /**
   * A genuine token past its lifetime (a string or a source such as `commandToken(cmd, '$EXPIRED_TOKEN')`):
   * auth.expired-token checks it is refused 401 invalid_identity_token (§5). Without it that check is skipped.
   */
  expiredToken?: string | TokenSource;
  /** The tier whoami must show for `token` (§4 rule 2); with `deniedTier`, for `deniedToken` too. */
  tier?: string;
  deniedTier?: string;
  /** The tool the denied token may not call (default web.search). */
  deniedTool?: ToolName;
  /** Most requests the rate-limit burst may send (default 300). */
  rateLimitBudget?: number;
  /** Longest single wait the suite grants a 429 (its Retry-After or rate-limit reset; default 60 s). */
  maxWaitSeconds?: number;
  /**
   * The whole run's time budget, waits included (default 300 s): the suite paces its checks to the
   * gateway's limits within it, sending fewer generated cases when the limits are tight, and never begins
   * a wait that would end after it (what that leaves unobserved is named, exit 2).
   */
  timeBudgetSeconds?: number;
  /**
   * The clock the suite waits on and measures with (default real time). Tests give the suite and the
   * gateway one virtual clock, so that minutes of rate-limit waits take no real time.
   */
  clock?: SuiteClock;
  /**
   * Longest Retry-After waited once, by authz.allowed-calls-served, before a call is judged never served
   * (default 120 s, or maxWaitSeconds when that is longer).
   */
  longWaitSeconds?: number;
  /** Waits (default: the clock's); tests inject their own. */
  sleep?: (ms: number) => Promise<void>;
  /** fast-check seed (default: $AGENT_GATEWAY_SEED, else random); printed so a run can be replayed. */
  seed?: number;
  /** Generated cases per property check (default 25). */
  numRuns?: number;
  /** With `seed`, replays one shrunk counterexample (use with `only`). */
  path?: string;
  /** Check ids to run (default: all). */
  only?: readonly string[];
  /**
   * Check ids the user accepts leaving unobserved (e.g. `ratelimit.burst-429` for a limit beyond any
   * budget): an inconclusive one of them does not make the run exit 2. Listed in every report.
   */
  allowUnobserved?: readonly string[];
  /** JSON bodies the tools are called with; their fields are "not shown" in the spec. */
  searchBody?: string;
  fetchBody?: string;
  /** Longest time one check may generate cases for, waits included (default 60 s, on the clock). */
  checkTimeLimitSeconds?: number;
  /** Progress lines (waits, bursts). */
  log?: (line: string) => void;
  /** Called as each check finishes, for progress output. */
  onResult?: (result: CheckResult) => void;
  /** Builds the command that replays a counterexample, shown with failures. */
  replayCommand?: (check: CheckResult, reproduction: Reproduction) => string;
}

export interface ConformanceReport {
  target: string;
  seed: number;
  numRuns: number;
  startedAt: string;
  durationMs: number;
  requests: number;
  /** The run's time budget (s), and the time spent waiting as the gateway asked (ms). */
  timeBudgetSeconds: number;
  waitedMs: number;
  checks: CheckResult[];
  /** The checks the user accepted leaving unobserved (--allow-unobserved), as given. */
  allowedUnobserved: string[];
  summary: {
    pass: number;
    fail: number;
    skipped: number;
    inconclusive: number;
    mustFailed: number;
    shouldFailed: number;
    executed: number;
    /** Failures because the gateway never served what the check needs (among `fail`). */
    notServed: number;
    /** Inconclusive checks by why they could not observe (a budget the user set, a suite error). */
    inconclusiveBy: Partial<Record<Unobserved, number>>;
    /** Inconclusive MUST checks not accepted with --allow-unobserved: each makes the run exit 2. */
    mustUnobserved: number;
  };
}

/** The counts a report heads with, from its check results (the reporters and the exit code read these). */
export function summariseResults(
  results: readonly CheckResult[],
  allowed: readonly string[] = [],
): ConformanceReport['summary'] {
  const count = (verdict: CheckResult['verdict']) => results.filter((r) => r.verdict === verdict).length;
  const inconclusiveBy: Partial<Record<Unobserved, number>> = {};
  for (const r of results) {
    if (r.verdict === 'inconclusive' && r.unobserved)
      inconclusiveBy[r.unobserved] = (inconclusiveBy[r.unobserved] ?? 0) + 1;
  }
  return {
    pass: count('pass'),
    fail: count('fail'),
    skipped: count('skipped'),
    inconclusive: count('inconclusive'),
    mustFailed: results.filter((r) => r.verdict === 'fail' && r.level === 'MUST').length,
    shouldFailed: results.filter((r) => r.verdict === 'fail' && r.level === 'SHOULD').length,
    executed: results.length - count('skipped'),
    notServed: results.filter((r) => r.verdict === 'fail' && r.unobserved === 'not-served').length,
    inconclusiveBy,
    mustUnobserved: blockingUnobserved(results, false, allowed).length,
  };
}

/** The suite could not do its job: target unreachable, token command failed, nothing to run (exit 2). */
export class CannotRunError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CannotRunError';
  }
}

/** Longest single wait granted a 429 by default (s): a 15 s block or a minute's window is waited out. */
export const DEFAULT_MAX_WAIT_SECONDS = 60;
/** The run's time budget by default (s), waits included. */
export const DEFAULT_TIME_BUDGET_SECONDS = 300;

export const DEFAULT_SEARCH_BODY = JSON.stringify({ query: 'agent tool gateway conformance' });
export const DEFAULT_FETCH_BODY = JSON.stringify({ url: 'https://example.com/' });

/** The checks selected by `only`; unknown ids are an error naming the known ones. */
export function selectChecks(only?: readonly string[]): readonly Check[] {
  if (!only || only.length === 0) return CHECKS;
  const unknown = only.filter((id) => !CHECKS.some((c) => c.id === id));
  if (unknown.length > 0) {
    throw new CannotRunError(
      `unknown check id ${unknown.join(', ')}; known ids: ${CHECKS.map((c) => c.id).join(', ')}`,
    );
  }
  return CHECKS.filter((c) => only.includes(c.id));
}

const asSource = (token: string | TokenSource | undefined, variable: string) =>
  typeof token === 'string' ? staticToken(token, variable) : token;

/** A seed from the environment when set, else a random one; always printed with the results. */
export function defaultSeed(): number {
  const raw = process.env.AGENT_GATEWAY_SEED?.trim();
  if (!raw) return Math.floor(Math.random() * 2 ** 31);
  const seed = Number(raw);
  if (!/^\d+$/.test(raw) || seed > 2 ** 31 - 1) {
    throw new CannotRunError(`AGENT_GATEWAY_SEED must be an integer from 0 to ${2 ** 31 - 1}, got "${raw}"`);
  }
  return seed;
}

/**
 * Exit code for CI. 0: every MUST check (with strict, every SHOULD too) was observed and passed, or was
 * skipped for want of an input or accepted unobserved by the user. 1: a check failed. 2: the suite could
 * not do its job: nothing executed, or a MUST check (with strict, a SHOULD too) could not observe its rule
 * and was not accepted with --allow-unobserved. A failure wins over an unobserved check.
 */
export function exitCodeFor(
  report: Pick<ConformanceReport, 'summary' | 'checks'> &
    Partial<Pick<ConformanceReport, 'allowedUnobserved'>>,
  strict: boolean,
): 0 | 1 | 2 {
  if (report.summary.executed === 0) return 2;
  if (report.summary.mustFailed > 0) return 1;
  if (strict && report.summary.shouldFailed > 0) return 1;
  if (blockingUnobserved(report.checks, strict, report.allowedUnobserved).length > 0) return 2;
  return 0;
}

function checkJsonBody(name: string, body: string) {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new CannotRunError(`${name} is not valid JSON: ${body}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CannotRunError(`${name} must be a JSON object (the request's fields): ${body}`);
}

/**
 * Runs the conformance checks against a gateway over HTTP.
 *
 * @example
 * const report = await runConformance({ baseUrl: 'http://127.0.0.1:8787', token, deniedToken });
 * process.exitCode = exitCodeFor(report, false);
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const checks = selectChecks(options.only);
  const allowedUnobserved = [...(options.allowUnobserved ?? [])];
  selectChecks(allowedUnobserved);
  const log = options.log ?? (() => {});
  const searchBody = options.searchBody ?? DEFAULT_SEARCH_BODY;
  const fetchBody = options.fetchBody ?? DEFAULT_FETCH_BODY;
  checkJsonBody('the search body', searchBody);
  checkJsonBody('the fetch body', fetchBody);
  const tokens = {
    valid: asSource(options.token, '$TOKEN'),
    denied: asSource(options.deniedToken, '$DENIED_TOKEN'),
    expired: asSource(options.expiredToken, '$EXPIRED_TOKEN'),
  };
  const baseClock = options.clock ?? REAL_CLOCK;
  // A sleep given without a clock: time as the suite sees it moves by what it slept, so a wait injected
  // away does not leave the pacing waiting for a real clock that never got there.
  let slept = 0;
  const injected = options.sleep;
  const clock: SuiteClock = injected
    ? {
        now: () => baseClock.now() + (options.clock ? 0 : slept),
        sleep: async (ms) => {
          slept += ms;
          await injected(ms);
        },
      }
    : baseClock;
  const maxWaitSeconds = options.maxWaitSeconds ?? DEFAULT_MAX_WAIT_SECONDS;
  const timeBudgetSeconds = options.timeBudgetSeconds ?? DEFAULT_TIME_BUDGET_SECONDS;
  const started = clock.now();
  const deadline = started + timeBudgetSeconds * 1000;
  const client = createSuiteClient({
    baseUrl: options.baseUrl,
    tokens,
    maxWaitSeconds,
    log,
    clock,
    deadline,
  });
  const seed = options.seed ?? defaultSeed();
  const numRuns = options.numRuns ?? 25;
  const allowedTools = options.allowedTools ?? TOOLS;
  const unknownTools = allowedTools.filter((tool) => !TOOLS.includes(tool));
  if (unknownTools.length > 0)
    throw new CannotRunError(
      `unknown tool ${unknownTools.join(', ')} in the allowed tools; known: ${TOOLS.join(', ')}`,
    );
  const memo = new Map<string, { value: Promise<unknown>; owner: string }>();
  /** The check running now, and the earlier checks whose shared observation it read (the burst). */
  let running = '';
  let sharedFrom = new Set<string>();
  const endpoints: Record<Endpoint['name'], Endpoint> = {
    whoami: { name: 'whoami', method: SPEC_ENDPOINTS.whoami.method, path: SPEC_ENDPOINTS.whoami.path },
    'web.search': {
      name: 'web.search',
      method: TOOLS_OF_SPEC['web.search'].method,
      path: TOOLS_OF_SPEC['web.search'].path,
      body: searchBody,
    },
    'web.fetch': {
      name: 'web.fetch',
      method: TOOLS_OF_SPEC['web.fetch'].method,
      path: TOOLS_OF_SPEC['web.fetch'].path,
      body: fetchBody,
    },
  };
  const ctx: CheckContext = {
    client,
    has: {
      token: tokens.valid !== undefined,
      deniedToken: tokens.denied !== undefined,
      expiredToken: tokens.expired !== undefined,
      tier: options.tier !== undefined || options.deniedTier !== undefined,
    },
    ...(options.tier !== undefined && { tier: options.tier }),
    ...(options.deniedTier !== undefined && { deniedTier: options.deniedTier }),
    endpoints,
    servedEndpoints: [
      endpoints.whoami,
      ...TOOLS.filter((t) => allowedTools.includes(t)).map((t) => endpoints[t]),
    ],
    allowedTools,
    deniedTool: options.deniedTool ?? DEFAULT_DENIED_TOOL,
    rateLimitBudget: options.rateLimitBudget ?? 300,
    maxWaitSeconds,
    longWaitSeconds: Math.max(options.longWaitSeconds ?? 120, maxWaitSeconds),
    seed,
    numRuns,
    path: options.path,
    timeLimitMs: (options.checkTimeLimitSeconds ?? 60) * 1000,
    now: clock.now,
    memo: <T>(key: string, compute: () => Promise<T>) => {
      const entry = memo.get(key);
      if (entry) {
        if (entry.owner !== running) sharedFrom.add(entry.owner);
        return entry.value as Promise<T>;
      }
      const value = compute();
      memo.set(key, { value, owner: running });
      return value;
    },
    sleep: (ms) => client.pause(ms, ''),
    log,
  };

  try {
    const probe = await client.send({
      method: SPEC_ENDPOINTS.health.method,
      path: SPEC_ENDPOINTS.health.path,
    });
    if (probe.response.status === 0) {
      throw new CannotRunError(`cannot reach the gateway at ${options.baseUrl}: ${probe.response.error}`);
    }
    for (const source of [tokens.valid, tokens.denied, tokens.expired]) {
      try {
        await source?.current();
      } catch (error) {
        throw new CannotRunError(error instanceof Error ? error.message : String(error));
      }
    }
    // A token the gateway does not accept would be blamed on the gateway, check after check: it is the
    // run's input that is wrong (whoami answers 200 to every valid token, spec section 4).
    for (const [token, source, need] of [
      [VALID_TOKEN, tokens.valid, 'token'],
      [DENIED_TOKEN, tokens.denied, 'deniedToken'],
    ] as const) {
      if (!source || !checks.some((check) => check.needs?.includes(need))) continue;
      const whoami = await client.send({
        method: SPEC_ENDPOINTS.whoami.method,
        path: SPEC_ENDPOINTS.whoami.path,
        token,
      });
      if (whoami.response.status !== 401) continue;
      const code = (whoami.response.json as { code?: unknown } | undefined)?.code;
      throw new CannotRunError(
        `the gateway does not accept the token in ${source.variable}: ${SPEC_ENDPOINTS.whoami.method} ${SPEC_ENDPOINTS.whoami.path} answered 401${typeof code === 'string' ? ` ${code}` : ''}. Give a current, valid token (or a --token-command that mints one).`,
      );
    }

    const results: CheckResult[] = [];
    /** Repeats refused as duplicates that checks of other rules met, for the check of that rule. */
    const repeatRefusals: { by: string; exchange: Exchange }[] = [];
    for (const [index, check] of checks.entries()) {
      // Each check's share of what is left of the budget; the rate-limit checks (last) share one burst.
      const left = deadline - clock.now();
      const share = left / Math.max(1, checks.length - index);
      running = check.id;
      sharedFrom = new Set();
      const sources = [tokens.valid, tokens.denied, tokens.expired];
      let { result, repeatRefused } = await runOne(
        check,
        { ...ctx, caseDeadline: clock.now() + share },
        sources,
      );
      // A repeat refused as a duplicate breaks retry safety (spec §4 rule 4), whichever check met it: when
      // retry.sequential is still to run, it is reported there, and the check that met it says so.
      const judgedLater = checks.slice(index + 1).some((c) => c.id === REPEAT_RULE) && ctx.has.token;
      if (repeatRefused && judgedLater) {
        repeatRefusals.push({ by: check.id, exchange: repeatRefused });
        result.message += ` Blamed on ${REPEAT_RULE} (spec §4 rule 4), the check of that rule, which reports this exchange.`;
      }
      if (
        check.id === REPEAT_RULE &&
        repeatRefusals.length > 0 &&
        result.verdict !== 'fail' &&
        result.verdict !== 'skipped'
      ) {
        const { unobserved: _notNow, ...own } = result;
        result = { ...own, ...(await withoutTokens(blamedRepeat(result, repeatRefusals), sources)) };
      }
      // Requests and time are told where they were spent: a check that read an observation an earlier
      // one made (the burst) says so, rather than "0 requests" as if it had observed nothing.
      if (sharedFrom.size > 0) result.sharedWith = [...sharedFrom];
      if (result.reproduction && options.replayCommand && result.reproduction.path) {
        result.reproduction.replay = options.replayCommand(result, result.reproduction);
      }
      results.push(result);
      options.onResult?.(result);
    }
    return {
      target: options.baseUrl,
      seed,
      numRuns,
      startedAt: new Date(started).toISOString(),
      durationMs: clock.now() - started,
      requests: client.requests,
      timeBudgetSeconds,
      waitedMs: client.waitedMs,
      checks: results,
      allowedUnobserved,
      summary: summariseResults(results, allowedUnobserved),
    };
  } finally {
    client.close();
  }
}

const MISSING_OPTION = {
  token: '--token or --token-command',
  deniedToken: '--denied-token or --denied-token-command',
  expiredToken: '--expired-token or --expired-token-command (a genuine token past its lifetime; optional)',
  tier: '--tier (the tier whoami must show for --token; optional)',
};

/** The check of retry safety (spec §4 rule 4): a repeat refused as a duplicate is its failure. */
const REPEAT_RULE = 'retry.sequential';

/**
 * retry.sequential's verdict when its own repeats held (or could not all be observed), but other checks
 * met repeats refused as duplicates: a failure, naming the first such exchange and the check that met it.
 */
function blamedRepeat(own: CheckResult, met: { by: string; exchange: Exchange }[]): CheckOutcome {
  const [first] = met as [{ by: string; exchange: Exchange }];
  const others =
    met.length > 1
      ? ` (and ${met.length - 1} more, met by ${[...new Set(met.slice(1).map((m) => m.by))].join(', ')})`
      : '';
  const ownly =
    own.verdict === 'pass'
      ? `its own repeats held (${own.message})`
      : `its own repeats were not all observed (${own.message})`;
  return {
    verdict: 'fail',
    message: `Expected every repeat of a call to answer as the first (spec §4 rule 4: whoami, search and fetch are safe to repeat); got ${describeResponse(first.exchange)} to ${describeCall(first.exchange)}, a call the gateway had answered before in this run, met by ${first.by}${others}; ${ownly}. Fix: make whoami, search and fetch safe to retry: no conflict or duplicate errors for a repeated request`,
    reproduction: reproductionOf(first.exchange),
  };
}

async function runOne(
  check: Check,
  ctx: CheckContext,
  tokenSources: (TokenSource | undefined)[],
): Promise<{ result: CheckResult; repeatRefused?: Exchange }> {
  const base = { id: check.id, title: check.title, specRef: check.specRef, level: check.level };
  const missing = (check.needs ?? []).filter((need) => !ctx.has[need]);
  if (missing.length > 0) {
    return {
      result: {
        ...base,
        verdict: 'skipped',
        message: `needs ${missing.map((m) => MISSING_OPTION[m]).join(' and ')}`,
        durationMs: 0,
        requests: 0,
      },
    };
  }
  const started = ctx.now();
  const before = ctx.client.requests;
  let outcome: Awaited<ReturnType<Check['run']>>;
  try {
    outcome = await check.run(ctx);
  } catch (error) {
    if (error instanceof TokenCommandError) throw new CannotRunError(error.message);
    outcome = {
      verdict: 'inconclusive',
      unobserved: 'suite-error',
      message: `the check could not run: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const { repeatRefused, ...told } = outcome;
  return {
    result: {
      ...base,
      ...(await withoutTokens(told, tokenSources)),
      durationMs: ctx.now() - started,
      requests: ctx.client.requests - before,
    },
    ...(repeatRefused && { repeatRefused }),
  };
}

/** Takes the suite's tokens out of what the gateway echoed into a message or counterexample. */
async function withoutTokens(
  outcome: Awaited<ReturnType<Check['run']>>,
  sources: (TokenSource | undefined)[],
): Promise<Awaited<ReturnType<Check['run']>>> {
  const tokens: string[] = [];
  for (const source of sources) {
    const value = await source?.current().catch(() => undefined);
    if (value) tokens.push(value);
  }
  const redact = (text: string) => redactTokens(text, tokens);
  const { reproduction } = outcome;
  return {
    ...outcome,
    message: redact(outcome.message),
    ...(reproduction && {
      reproduction: {
        ...reproduction,
        ...(reproduction.counterexample !== undefined && {
          counterexample: redact(reproduction.counterexample),
        }),
        ...(reproduction.exchange && { exchange: redactExchange(reproduction.exchange, redact) }),
      },
    }),
  };
}

/** An exchange with the suite's tokens taken out of everything the gateway sent back (and of what was sent). */
function redactExchange(record: ExchangeRecord, redact: (text: string) => string): ExchangeRecord {
  const { request, response } = record;
  return {
    ...record,
    request: {
      ...request,
      headers: request.headers.map(([name, value]) => [name, redact(value)]),
      ...(request.body !== undefined && { body: redact(request.body) }),
    },
    response: {
      ...response,
      headers: Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, redact(v)])),
      body: redact(response.body),
    },
  };
}
