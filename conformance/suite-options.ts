import { z } from 'zod';
import { TOOL_NAMES } from '../vocabulary/tools.ts';

/** The request bodies the tools are called with by default (their fields are "not shown" in the spec). */
export const DEFAULT_SEARCH_BODY = JSON.stringify({ query: 'agent tool gateway conformance' });
export const DEFAULT_FETCH_BODY = JSON.stringify({ url: 'https://example.com/' });

const tool = z.enum(TOOL_NAMES);

/**
 * The conformance suite's tunable options, declared once: `runConformance`'s defaults, the flags of
 * `agent-gateway check` (and their help) and the GitHub Action's inputs (action.yml, tested against this
 * schema) derive from it. What a run is given besides (tokens, the clock, callbacks) is in `ConformanceOptions`.
 */
export const suiteOptionsSchema = z.strictObject({
  allowedTools: z
    .array(tool)
    .optional()
    .describe(
      'the tools the token may call, when not both: web.search, web.fetch or none (the others are skipped, never passed)',
    ),
  deniedTool: tool.default(TOOL_NAMES[0]).describe('the tool the denied token may not call'),
  tier: z
    .string()
    .optional()
    .describe('optional: the tier whoami must show for the token (authz.whoami-tier; skipped without it)'),
  deniedTier: z.string().optional().describe('optional: the tier whoami must show for the denied token'),
  rateLimitBudget: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(300)
    .describe('most requests the rate-limit burst may send'),
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

export type SuiteOptions = z.output<typeof suiteOptionsSchema>;

/** Options of the library only: no flag of `check`, no input of the Action. */
export const LIBRARY_ONLY_OPTIONS = ['longWaitSeconds', 'checkTimeLimitSeconds'] as const;

/** Every option at its default (the optional ones absent). */
export const SUITE_DEFAULTS: SuiteOptions = suiteOptionsSchema.parse({});
