/**
 * The Agent Tool Gateway conformance suite: property-based checks of any gateway over HTTP.
 *
 * @example
 * import { runConformance, exitCodeFor } from 'agent-tool-gateway-harness/conformance';
 * const report = await runConformance({ baseUrl: 'http://127.0.0.1:8787', token, deniedToken });
 */

export { parseRetryAfter, retryAfterDelayMs } from '../vocabulary/retry-after.ts';
// A check's and a result's `specRef` is data: `formatSpecRef` prints it as the reports do (`§5 rule 3, §7`).
export { formatSpecRef, type SpecCitation, type SpecRef, type SpecSection } from '../vocabulary/spec-ref.ts';
export type {
  Check,
  CheckContext,
  CheckedToolName,
  CheckOutcome,
  Endpoint,
} from './check-kit/check-contract.ts';
export { CheckFailure, Inconclusive } from './check-kit/check-contract.ts';
export { CHECKS } from './checks/index.ts';
export { exhaustedWaitMs, rateLimitHint } from './client/rate-limit-headers.ts';
export type {
  CheckResult,
  ExchangeRecord,
  Level,
  Reproduction,
  Unobserved,
  Verdict,
} from './model/check-result.ts';
export type { SuiteClock } from './model/suite-clock.ts';
export { formatCheckLine, formatSummary } from './reporters/console.ts';
export { escapeHtml, toHtmlReport } from './reporters/html.ts';
export { toJsonReport } from './reporters/json.ts';
export { toJunitXml } from './reporters/junit.ts';
export { toMarkdownSummary } from './reporters/markdown.ts';
export {
  CannotRunError,
  type ConformanceOptions,
  type ConformanceReport,
  exitCodeFor,
  type RunInputs,
  runConformance,
  selectChecks,
} from './run/runner.ts';
export { blockingUnobserved, remedyOf, UNOBSERVED_REMEDY } from './run/unobserved.ts';
export {
  parseSuiteOptions,
  SUITE_DEFAULTS,
  type SuiteOptions,
  type SuiteOptionsInput,
  suiteOptionsSchema,
} from './suite/suite-options.ts';
export {
  parseToolDeclaration,
  type SuiteTool,
  suiteTools,
  type ToolDeclaration,
} from './suite/suite-tools.ts';
export { commandToken, staticToken, type TokenSource } from './tokens/token-source.ts';
