import { SPEC_ENDPOINTS } from '../../vocabulary/endpoints.ts';
import type { Check, CheckContext } from '../check-kit/check-contract.ts';
import { CHECKS } from '../checks/index.ts';
import { createSuiteClient, type SuiteClient } from '../client/http-client.ts';
import { CannotRunError } from '../model/cannot-run-error.ts';
import type { CheckResult, Reproduction } from '../model/check-result.ts';
import { REAL_CLOCK, type SuiteClock } from '../model/suite-clock.ts';
import { readExpectedResults } from '../suite/expected-results.ts';
import { parseSuiteOptions, type SuiteOptions, type SuiteOptionsInput } from '../suite/suite-options.ts';
import {
  parseToolDeclaration,
  type SuiteTool,
  suiteTools,
  type ToolDeclaration,
} from '../suite/suite-tools.ts';
import { staticToken, type TokenSource } from '../tokens/token-source.ts';
import { type ConformanceReport, summariseResults } from './report-summary.ts';
import { createCrossCheckBlame } from './run-blame.ts';
import { runOne } from './run-check.ts';
import { createSharedMemo, preflight, type RunTokens, runClock } from './run-steps.ts';

export { CannotRunError } from '../model/cannot-run-error.ts';
export { DEFAULT_FETCH_BODY, DEFAULT_SEARCH_BODY } from '../suite/suite-options.ts';
export { type ConformanceReport, exitCodeFor, summariseResults } from './report-summary.ts';

/**
 * What a run is given besides the suite's tunable options: the target, its tokens, the clock and callbacks.
 * The tunable options (tools, bodies, budgets, seed, ...) are the schema's, `SuiteOptionsInput`, declared
 * once with their bounds and defaults in suite-options.ts; the CLI's flags, the Action's inputs and
 * `describeConformance` derive from the same schema.
 */
export interface RunInputs {
  /** The gateway's base URL, e.g. `https://staging.example.com` (paths under /v1 are appended). */
  baseUrl: string;
  /**
   * A valid identity token allowed to call every tool checked (narrow with `allowedTools`): a string, or a
   * source such as `commandToken(cmd, '$TOKEN')`.
   */
  token?: string | TokenSource;
  /** A valid token that may not call `deniedTool`. Without it the authorization checks are skipped. */
  deniedToken?: string | TokenSource;
  /**
   * A genuine token past its lifetime (a string or a source such as `commandToken(cmd, '$EXPIRED_TOKEN')`):
   * auth.expired-token checks it is refused 401 invalid_identity_token (§5). Without it that check is skipped.
   */
  expiredToken?: string | TokenSource;
  /**
   * A genuine token the identity provider revoked before its expiry (a string or a source such as
   * `commandToken(cmd, '$REVOKED_TOKEN')`): auth.revoked-token checks it is refused 401 invalid_identity_token
   * (§5). Without it that check is skipped.
   */
  revokedToken?: string | TokenSource;
  /**
   * The clock the suite waits on and measures with (default real time). Tests give the suite and the
   * gateway one virtual clock, so that minutes of rate-limit waits take no real time.
   */
  clock?: SuiteClock;
  /** Waits (default: the clock's); tests inject their own. */
  sleep?: (ms: number) => Promise<void>;
  /** Progress lines (waits, bursts). */
  log?: (line: string) => void;
  /** Called as each check finishes, for progress output. */
  onResult?: (result: CheckResult) => void;
  /** Builds the command that replays a counterexample, shown with failures. */
  replayCommand?: (check: CheckResult, reproduction: Reproduction) => string;
}

/** What a run takes: its inputs, and the suite's options as given (the runner fills in the defaults, once). */
export type ConformanceOptions = RunInputs & SuiteOptionsInput;

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
 * Runs the conformance checks against a gateway over HTTP.
 *
 * @example
 * const report = await runConformance({ baseUrl: 'http://127.0.0.1:8787', token, deniedToken });
 * process.exitCode = exitCodeFor(report, false);
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  // The suite's options, their defaults applied here and nowhere else.
  const suite = parseSuiteOptions(options);
  const checks = selectChecks(suite.only);
  const allowedUnobserved = [...(suite.allowUnobserved ?? [])];
  selectChecks(allowedUnobserved);
  const expectedResults = suite.expectedResults ? readExpectedResults(suite.expectedResults) : {};
  try {
    selectChecks(Object.keys(expectedResults));
  } catch (error) {
    throw new CannotRunError(
      `the expected-results file ${suite.expectedResults}: ${(error as Error).message}`,
    );
  }
  const log = options.log ?? (() => {});
  const tools = suiteTools(await declaredTools(suite, log), {
    'web.search': suite.searchBody,
    'web.fetch': suite.fetchBody,
  });
  const tokens: RunTokens = {
    valid: asSource(options.token, '$TOKEN'),
    denied: asSource(options.deniedToken, '$DENIED_TOKEN'),
    expired: asSource(options.expiredToken, '$EXPIRED_TOKEN'),
    revoked: asSource(options.revokedToken, '$REVOKED_TOKEN'),
  };
  const clock = runClock(options.clock ?? REAL_CLOCK, options.clock, options.sleep);
  const { maxWaitSeconds, timeBudgetSeconds, numRuns } = suite;
  const started = clock.now();
  const deadline = started + timeBudgetSeconds * 1000;
  const client = createSuiteClient({
    baseUrl: options.baseUrl,
    tokens,
    maxWaitSeconds,
    log,
    clock,
    deadline,
    writeLikePaths: tools.filter((tool) => tool.writeLike).map((tool) => tool.path),
  });
  const seed = suite.seed ?? defaultSeed();
  const shared = createSharedMemo();
  const ctx = checkContext({ suite, client, tokens, tools, seed, clock, memo: shared.memo, log });
  try {
    await preflight(client, options.baseUrl, tokens, checks);
    const results = await runChecks(checks, ctx, { tokens, deadline, shared, options });
    return {
      target: options.baseUrl,
      tools: tools.map(({ name, path, writeLike }) => ({ name, path, ...(writeLike && { writeLike }) })),
      seed,
      numRuns,
      startedAt: new Date(started).toISOString(),
      durationMs: clock.now() - started,
      requests: client.requests,
      timeBudgetSeconds,
      waitedMs: client.waitedMs,
      checks: results,
      allowedUnobserved,
      expectedResults,
      summary: summariseResults(results, allowedUnobserved, expectedResults),
    };
  } finally {
    client.close();
  }
}

/**
 * The tools the run was told of: those of the OpenAPI document (`openapi`), each --tool adding one or
 * replacing the document's of the same name; or the --tool declarations alone. What the document lacks of
 * the spec's endpoints is logged, in one line.
 */
async function declaredTools(
  suite: SuiteOptions,
  log: (line: string) => void,
): Promise<ToolDeclaration[] | undefined> {
  const given = suite.tools?.map(parseToolDeclaration);
  if (!suite.openapi) return given;
  const { openApiTools } = await import('../suite/openapi-tools.ts');
  const document = await openApiTools(suite.openapi);
  for (const note of document.notes) log(note);
  const tools = [...document.tools];
  for (const tool of given ?? []) {
    const at = tools.findIndex((t) => t.name === tool.name);
    if (at >= 0) tools[at] = { ...tools[at], ...tool };
    else tools.push(tool);
  }
  log(
    `Tools from the OpenAPI document${given?.length ? ' and --tool' : ''}: ${tools.map((t) => `${t.name}${t.writeLike ? ' (write-like)' : ''}`).join(', ')}`,
  );
  return tools;
}

/** What every check is given: the client, the inputs it has, the endpoints and tools, budgets and the seed. */
function checkContext(run: {
  suite: SuiteOptions;
  client: SuiteClient;
  tokens: RunTokens;
  tools: SuiteTool[];
  seed: number;
  clock: SuiteClock;
  memo: CheckContext['memo'];
  log: (line: string) => void;
}): CheckContext {
  const { suite, client, tokens, tools, clock } = run;
  const { allowedTools, deniedTool } = toolRoles(tools, suite);
  // whoami first, then the tools the gateway declares, in their order (the checks' protected endpoints).
  const endpoints: CheckContext['endpoints'] = {
    whoami: { name: 'whoami', method: SPEC_ENDPOINTS.whoami.method, path: SPEC_ENDPOINTS.whoami.path },
    ...Object.fromEntries(tools.map((tool) => [tool.name, tool])),
  };
  return {
    client,
    has: {
      token: tokens.valid !== undefined,
      deniedToken: tokens.denied !== undefined,
      expiredToken: tokens.expired !== undefined,
      revokedToken: tokens.revoked !== undefined,
      tier: suite.tier !== undefined || suite.deniedTier !== undefined,
    },
    ...(suite.tier !== undefined && { tier: suite.tier }),
    ...(suite.deniedTier !== undefined && { deniedTier: suite.deniedTier }),
    endpoints,
    tools,
    servedEndpoints: [endpoints.whoami, ...tools.filter((t) => allowedTools.includes(t.name))],
    allowedTools,
    deniedTool,
    rateLimitBudget: suite.rateLimitBudget,
    maxWaitSeconds: suite.maxWaitSeconds,
    longWaitSeconds: Math.max(suite.longWaitSeconds, suite.maxWaitSeconds),
    seed: run.seed,
    numRuns: suite.numRuns,
    path: suite.path,
    timeLimitMs: suite.checkTimeLimitSeconds * 1000,
    now: clock.now,
    timeBudgetMs: suite.timeBudgetSeconds * 1000,
    slow: (endpoint) => client.longestAsked(`${endpoint.method} ${endpoint.path}`) >= SLOW_WINDOW_MS,
    memo: run.memo,
    sleep: (ms) => client.pause(ms, ''),
    log: run.log,
  };
}

/**
 * The share of the time budget the checks' generated cases may spend waiting out the gateway's limits, split
 * evenly between the checks: past its part, a check sends only the cases it always sends (the first of
 * each kind, the boundary examples). A gateway with tight limits is judged by every check, with fewer
 * probes, and the run ends well inside its budget instead of spending it all on waits.
 */
const WAIT_SHARE = 0.2;
/** A limit whose 429 asks a wait this long (ms) or longer has a slow window: its endpoint gets fewer calls. */
const SLOW_WINDOW_MS = 30_000;

/** Runs the checks in order, each with its share of the budget left; blame across checks settled as they end. */
async function runChecks(
  checks: readonly Check[],
  ctx: CheckContext,
  run: {
    tokens: RunTokens;
    deadline: number;
    shared: ReturnType<typeof createSharedMemo>;
    options: Pick<ConformanceOptions, 'replayCommand' | 'onResult'>;
  },
): Promise<CheckResult[]> {
  const { tokens, deadline, shared, options } = run;
  const blame = createCrossCheckBlame(checks, ctx.has.token, [
    tokens.valid,
    tokens.denied,
    tokens.expired,
    tokens.revoked,
  ]);
  const results: CheckResult[] = [];
  for (const [index, check] of checks.entries()) {
    // Each check's share of what is left of the budget; the rate-limit checks (last) share one burst.
    const left = deadline - ctx.now();
    const share = left / Math.max(1, checks.length - index);
    shared.begin(check.id);
    const sources = [tokens.valid, tokens.denied, tokens.expired, tokens.revoked];
    const caseWaitAllowanceMs = ((ctx.timeBudgetMs ?? Number.POSITIVE_INFINITY) * WAIT_SHARE) / checks.length;
    const outcome = await runOne(
      check,
      { ...ctx, caseDeadline: ctx.now() + share, caseWaitAllowanceMs },
      sources,
    );
    const result = await blame.repeats(index, outcome.result, outcome.repeatRefused);
    // Requests and time are told where they were spent: a check that read an observation an earlier
    // one made (the burst) says so, rather than "0 requests" as if it had observed nothing.
    const sharedFrom = shared.sharedFrom();
    if (sharedFrom.size > 0) result.sharedWith = [...sharedFrom];
    if (result.reproduction && options.replayCommand && result.reproduction.path) {
      result.reproduction.replay = options.replayCommand(result, result.reproduction);
    }
    blame.tokens(check.id, result, outcome.realTokenRefused === true);
    results.push(result);
    options.onResult?.(result);
  }
  return results;
}

/**
 * The roles of the declared tools: those the valid token may call (`allowedTools`, default all) and the one
 * the denied token may not (`deniedTool`, default web.search, or the first tool declared without it). A
 * tool named that the gateway was not said to declare is the run's mistake (exit 2).
 */
function toolRoles(
  tools: readonly SuiteTool[],
  suite: Pick<SuiteOptions, 'allowedTools' | 'deniedTool'>,
): { allowedTools: string[]; deniedTool: string } {
  const names = tools.map((tool) => tool.name);
  const undeclared = (given: readonly string[], label: string) => {
    const unknown = given.filter((name) => !names.includes(name));
    if (unknown.length > 0)
      throw new CannotRunError(
        `unknown tool ${unknown.join(', ')} in ${label}; the tools checked: ${names.join(', ')} (declare others with --tool NAME=PATH)`,
      );
  };
  const allowedTools = suite.allowedTools ?? names;
  undeclared(allowedTools, 'the allowed tools');
  const [first] = names;
  const deniedTool =
    suite.deniedTool ?? (names.includes('web.search') || first === undefined ? 'web.search' : first);
  undeclared([deniedTool], 'the denied tool');
  return { allowedTools, deniedTool };
}
