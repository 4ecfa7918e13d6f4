import type { SpecRef } from '../../vocabulary/spec-ref.ts';
import type { RateLimitRule } from '../config/schema.ts';
import type { JournalEntry } from '../journal/journal.ts';
import type { Corpus } from '../providers/corpus.ts';
import type { AnyToolDefinition } from '../tools/index.ts';
import type { ClientReportOptions } from './report-options.ts';

export { type ClientReportOptions, DEFAULT_REPORT_OPTIONS } from './report-options.ts';

/** What every rule sees: one agent's journal entries, oldest first, and the gateway's setup. */
export interface RuleContext {
  agent: string;
  entries: readonly JournalEntry[];
  rateLimitRules: readonly RateLimitRule[];
  corpus: Corpus;
  options: ClientReportOptions;
  /**
   * The gateway's tools (built-in and extra), for what a rule needs of an extra tool: whether its answer is
   * untrusted and, when it is a fixture, what that answer plants (`untrusted-content`). Absent: the built-in
   * tools only.
   */
  tools?: readonly ReportedTool[];
  /**
   * Requests of the journal that belong to no agent (no token, key or connection names one): some may be
   * this agent's, which a rule that needs them cannot see (`refresh-invalid-token`: a refused token no one
   * named).
   */
  unattributed?: readonly JournalEntry[];
}

/** What the client report reads of a tool's definition. */
export type ReportedTool = Pick<AnyToolDefinition, 'name' | 'untrusted' | 'fixedAnswer'>;

/** A broken rule, with the requests that show it. */
export interface Finding {
  message: string;
  /** Every request that shows it (the text report shows the first few, the JSON all of them). */
  requests: readonly JournalEntry[];
  /** How many times the one behaviour happened (storms, early requests, loops, requests): 1 if absent. */
  count?: number;
  /**
   * The inference the finding rests on, when it is not a fact of the journal, e.g. `taken as a retry of
   * #202: same URL, 0.2 s later`. The report links it to what the rule cannot tell apart.
   */
  inference?: string;
}

/** A client safety rule of the spec, judged from the journal. */
export interface ClientRule {
  /** Stable id, e.g. `honor-retry-after`. */
  id: string;
  title: string;
  /** The spec sections and rules it enforces (`formatSpecRef` prints them). */
  specRef: SpecRef;
  judge(ctx: RuleContext): Finding[];
  /**
   * Why the journal could not show whether the rule was kept, when it could not (green means seen): asked
   * only when `judge` found nothing, and then the rule is reported as not observed, never as passed.
   */
  unobserved?(ctx: RuleContext): string | undefined;
}
