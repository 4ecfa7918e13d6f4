import { z } from 'zod';
import { TOOL_NAME_PATTERN, TOOLS } from '../../vocabulary/tools.ts';
import { CannotRunError } from '../model/cannot-run-error.ts';

/** The request bodies the spec's tools are called with by default (their fields are "not shown" in the spec). */
export const DEFAULT_SEARCH_BODY = JSON.stringify(TOOLS['web.search'].conformanceBody);
export const DEFAULT_FETCH_BODY = JSON.stringify(TOOLS['web.fetch'].conformanceBody);

/** A tool's name (the spec's two, or one a gateway declares with `tools`); the runner checks it is declared. */
const tool = z
  .string()
  .max(64)
  .regex(TOOL_NAME_PATTERN, 'must be a tool name: lower-case words joined by dots, e.g. web.search');

/**
 * The conformance suite's tunable options, declared once: `runConformance`'s defaults, the flags of
 * `agent-gateway check` (and their help) and the GitHub Action's inputs (action.yml, tested against this
 * schema) and `describeConformance`'s options derive from it. What a run is given besides (the target, tokens,
 * the clock, callbacks) is `RunInputs` (runner.ts); `parseSuiteOptions` applies the defaults, once.
 */
export const suiteOptionsSchema = z.strictObject({
  tools: z
    .array(z.string().min(1))
    .optional()
    .describe(
      'a tool the gateway declares, as NAME=PATH or NAME=PATH=BODY, BODY inline JSON or @FILE (repeatable; NAME alone for web.search or web.fetch at the spec path; NAME:write-like=PATH for a write-like tool, sent with an Idempotency-Key): only these are checked (default: web.search and web.fetch)',
    )
    // One flag per tool (`--tool A=/a --tool B=/b`), one Action input line per tool: a body holds commas.
    .meta({ flag: 'tool', repeatable: true }),
  openapi: z
    .string()
    .min(1)
    .optional()
    .describe(
      "the gateway's OpenAPI 3.0 or 3.1 document (a file or an http(s) URL, JSON or YAML): the tools it describes are checked (paths, request bodies, write-like operations); --tool adds a tool or overrides one of the same name",
    ),
  allowedTools: z
    .array(tool)
    .optional()
    .describe(
      'the tools the token may call, when not all the gateway declares: names, or none (the others are skipped, never passed)',
    ),
  deniedTool: tool
    .optional()
    .describe(
      'the tool the denied token may not call (default web.search, or the first tool declared when web.search is not)',
    ),
  tier: z
    .string()
    .optional()
    .describe('the tier whoami must show for the token (authz.whoami-tier needs it)'),
  deniedTier: z.string().optional().describe('the tier whoami must show for the denied token'),
  rateLimitBudget: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(300)
    .describe(
      'most requests the rate-limit burst may have served (load shed with 503 + Retry-After is not counted; at most as many again)',
    ),
  maxWaitSeconds: z
    .number()
    .int()
    .min(0)
    .max(3600)
    .default(60)
    .describe(
      'longest single wait the suite grants a 429 (its Retry-After or rate-limit reset); a call never served yet is waited out once, up to 120 s',
    ),
  timeBudgetSeconds: z
    .number()
    .int()
    .min(10)
    .max(86_400)
    .default(300)
    .describe(
      "the whole run's time budget, waits included: the suite paces its checks to the gateway's limits within it, sending fewer generated cases when they are tight",
    ),
  seed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .optional()
    .describe('the fast-check seed (default: $AGENT_GATEWAY_SEED, else random; always printed)'),
  numRuns: z.number().int().min(1).max(100_000).default(25).describe('generated cases per property check'),
  path: z.string().optional().describe('with the seed and only: replay one shrunk counterexample'),
  only: z.array(z.string()).optional().describe('comma-separated check ids to run (default all)'),
  allowUnobserved: z
    .array(z.string())
    .optional()
    .describe(
      'comma-separated check ids you accept leaving unobserved (e.g. ratelimit.burst-429 for a limit beyond any budget): they do not make the run exit 2, and every report lists them',
    ),
  expectedResults: z
    .string()
    .min(1)
    .optional()
    .describe(
      'a YAML or JSON file mapping check ids to the verdict expected instead of pass (fail, skipped or inconclusive): listed verdicts neither fail the run nor make it exit 2; one that no longer happens is stale and fails the run',
    ),
  searchBody: z.string().default(DEFAULT_SEARCH_BODY).describe('JSON body for POST /v1/web/search'),
  fetchBody: z.string().default(DEFAULT_FETCH_BODY).describe('JSON body for POST /v1/web/fetch'),
  strict: z.boolean().default(false).describe('fail (exit 1) on SHOULD checks too'),
  longWaitSeconds: z
    .number()
    .int()
    .min(0)
    .default(120)
    .describe(
      'longest Retry-After waited once, by authz.allowed-calls-served, before a call is judged never served (or maxWaitSeconds when that is longer)',
    ),
  checkTimeLimitSeconds: z
    .number()
    .min(0)
    .default(60)
    .describe('longest time one check may generate cases for, waits included (on the clock)'),
});

/** The suite's options with their defaults: what the runner works with. */
export type SuiteOptions = z.output<typeof suiteOptionsSchema>;
/** The suite's options as a caller gives them (all optional): part of `runConformance`'s options. */
export type SuiteOptionsInput = z.input<typeof suiteOptionsSchema>;

/** Options of the library only: no flag of `check`, no input of the Action. */
export const LIBRARY_ONLY_OPTIONS = ['longWaitSeconds', 'checkTimeLimitSeconds'] as const;

/** Every option at its default (the optional ones absent). */
export const SUITE_DEFAULTS: SuiteOptions = suiteOptionsSchema.parse({});

/**
 * The suite's options out of everything a run is given (its other inputs left aside), checked against the
 * schema and with the defaults filled in: the one place they are applied. A bad value is the run's mistake
 * (CannotRunError, exit 2), named by option.
 *
 * @example
 * parseSuiteOptions({ baseUrl: 'http://127.0.0.1:8787', numRuns: 5 }).maxWaitSeconds; // 60
 */
export function parseSuiteOptions(given: object): SuiteOptions {
  const values = given as Record<string, unknown>;
  const picked = Object.fromEntries(
    Object.keys(suiteOptionsSchema.shape)
      .filter((key) => values[key] !== undefined)
      .map((key) => [key, values[key]]),
  );
  const parsed = suiteOptionsSchema.safeParse(picked);
  if (parsed.success) return parsed.data;
  throw new CannotRunError(
    parsed.error.issues.map((issue) => `${issue.path.join('.') || 'options'}: ${issue.message}`).join('; '),
  );
}
