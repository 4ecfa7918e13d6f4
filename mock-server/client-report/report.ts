import { printable } from '../../vocabulary/redact.ts';
import { formatSpecRef } from '../../vocabulary/spec-ref.ts';
import type { RateLimitRule } from '../config/schema.ts';
import type { JournalEntry } from '../journal/journal.ts';
import type { Corpus } from '../providers/corpus.ts';
import { agentRequests, type Unattributed } from './attribution.ts';
import { describe, type EpochView, epochSlices, epochViews, hasCausalFacts } from './journal-facts.ts';
import { CLIENT_REPORT_SCHEMA_VERSION } from './report-version.ts';
import { backoffWithJitter } from './rules/backoff-with-jitter.ts';
import { honorRetryAfter } from './rules/honor-retry-after.ts';
import { noParallelStorm } from './rules/no-parallel-storm.ts';
import { noRetryOnAccessDenied } from './rules/no-retry-on-access-denied.ts';
import { noSecretsInRequests } from './rules/no-secrets-in-requests.ts';
import { refreshInvalidToken } from './rules/refresh-invalid-token.ts';
import { retryCap } from './rules/retry-cap.ts';
import { untrustedContent } from './rules/untrusted-content.ts';
import { timelineOf } from './timeline.ts';
import {
  type ClientReportOptions,
  type ClientRule,
  DEFAULT_REPORT_OPTIONS,
  type ReportedTool,
} from './types.ts';

/** The spec's client safety rules (sections 1, 5, 7, 8), each judged from the journal. */
export const CLIENT_RULES: readonly ClientRule[] = [
  honorRetryAfter,
  backoffWithJitter,
  retryCap,
  refreshInvalidToken,
  noRetryOnAccessDenied,
  noSecretsInRequests,
  untrustedContent,
  noParallelStorm,
];

/** A request as a report shows it: enough to see what happened, nothing secret. */
export type RequestView = Pick<
  JournalEntry,
  | 'seq'
  | 'time'
  | 'method'
  | 'path'
  | 'operation'
  | 'status'
  | 'code'
  | 'retry_after'
  | 'query'
  | 'url'
  | 'duration_ms'
  | 'connection'
>;

export interface Violation {
  rule: string;
  spec_ref: string;
  message: string;
  /** How many times this one behaviour happened (one storm of many requests is one violation). */
  count: number;
  /** The inference it rests on, when it is not a fact of the journal. */
  inference?: string;
  /** Where the guide says what the rule cannot tell apart (set with `inference`). */
  cannot_tell_apart?: string;
  /** Every request that shows it; the text report shows the first few. */
  requests: RequestView[];
}

/** What the guide says each rule cannot tell apart: linked from every inference. */
export const CANNOT_TELL_APART = 'docs/agent-developers.md#what-the-client-report-cannot-tell-apart';
/** Requests shown per violation in the text report; the rest are counted ("and N more"). */
export const SHOWN_REQUESTS = 6;
/** Violations shown per rule in the text report; the rest are counted. */
export const SHOWN_VIOLATIONS = 5;

export interface ClientReport {
  /** The version of this JSON's shape (CLIENT_REPORT_SCHEMA_VERSION). */
  schema_version: typeof CLIENT_REPORT_SCHEMA_VERSION;
  agent: string;
  /** The agent's requests the report judged; 0 means there was nothing to grade. */
  requests: number;
  /** Requests of any agent the journal no longer holds (it keeps the most recent, up to its capacity). */
  journal_dropped?: number;
  /**
   * The agent's requests that came with neither connection facts (node:http) nor delivery facts (in
   * process: msw, direct fetch calls), as in hand-written journals: for those, a request within `graceMs`
   * of a refusal's answer was taken as already in flight, and requests arriving within 10 ms of each other
   * as sent together.
   */
  without_connection?: number;
  /**
   * Requests of the journal (after `since`) that belong to no agent: neither their token, nor an agent's own
   * API key they carried, nor the connection they came on names one. If some were this agent's, they were not
   * judged: the report says so.
   */
  unattributed?: Unattributed;
  from?: string;
  to?: string;
  /**
   * When the gateway clock was moved back during the agent's requests: each epoch (where it began, its time
   * range). Each rule judged every epoch apart; `from` and `to` are then the latest epoch's range (times of
   * different epochs do not compare: the range of all would run backwards).
   */
  epochs?: EpochView[];
  options: ClientReportOptions;
  /**
   * Per rule: its violations, and `unobserved` (why) when the journal could not show whether it was kept:
   * such a rule is not a pass (green means seen).
   */
  rules: { id: string; title: string; spec_ref: string; violations: number; unobserved?: string }[];
  violations: Violation[];
  /** What the agent did: its graded requests, the most recent 40, one a line (`timelineOf`). */
  timeline: string;
  /** The report as text (`formatClientReport`), when a gateway serves it (the admin API, `clientReport`). */
  text?: string;
}

/** The rules a report could not observe: not passed, whatever their violations (none). */
export const unobservedRules = (report: Pick<ClientReport, 'rules'>) =>
  report.rules.filter((r) => r.unobserved !== undefined);

/** Whether a report is a pass: something judged, no violation, every rule observed. */
export const reportPasses = (report: Pick<ClientReport, 'rules' | 'violations' | 'requests'>) =>
  report.requests > 0 && report.violations.length === 0 && unobservedRules(report).length === 0;

const view = (e: JournalEntry): RequestView => ({
  seq: e.seq,
  time: e.time,
  method: e.method,
  path: e.path,
  operation: e.operation,
  status: e.status,
  code: e.code,
  retry_after: e.retry_after,
  query: e.query,
  url: e.url,
  duration_ms: e.duration_ms,
  ...(e.connection === undefined ? {} : { connection: e.connection }),
});

/**
 * Grades one agent against the client safety rules, from the journal.
 *
 * @example
 * const report = createClientReport({ agent: 'agent-early', entries: gateway.journal.list(), rateLimitRules, corpus });
 * report.violations; // [] for a well-behaved agent
 */
export function createClientReport(input: {
  agent: string;
  entries: readonly JournalEntry[];
  rateLimitRules: readonly RateLimitRule[];
  corpus: Corpus;
  /** The gateway's tools (`runtime.tools`): an untrusted extra tool's fixture answer is then judged as a fetched page is. */
  tools?: readonly ReportedTool[];
  options?: Partial<ClientReportOptions>;
  /** How many older journal entries (of any agent) were dropped before these. */
  dropped?: number;
}): ClientReport {
  const given = Object.entries(input.options ?? {}).filter(([, value]) => value !== undefined);
  const options: ClientReportOptions = { ...DEFAULT_REPORT_OPTIONS, ...Object.fromEntries(given) };
  const since = options.since ?? 0;
  // Its own requests, and those named for nobody that its connections tie to it (attribution.ts).
  const { entries, unattributed, nobodys } = agentRequests(input.entries, input.agent, since);
  const ctx = {
    agent: input.agent,
    entries,
    rateLimitRules: input.rateLimitRules,
    corpus: input.corpus,
    options,
    ...(input.tools === undefined ? {} : { tools: input.tools }),
    ...(nobodys.length > 0 ? { unattributed: nobodys } : {}),
  };
  const violations: Violation[] = [];
  // The clock moved back between epochs: each is judged apart (facts/epochs.ts).
  const slices = epochSlices(entries);
  const rules = CLIENT_RULES.map((rule) => {
    const findings = slices.flatMap((slice) =>
      slices.length === 1 ? rule.judge(ctx) : rule.judge({ ...ctx, entries: slice.entries }),
    );
    for (const f of findings)
      violations.push({
        rule: rule.id,
        spec_ref: formatSpecRef(rule.specRef),
        message: f.message,
        count: f.count ?? 1,
        ...(f.inference ? { inference: f.inference, cannot_tell_apart: CANNOT_TELL_APART } : {}),
        requests: f.requests.map(view),
      });
    // Green means seen: with no request of the agent's, no rule saw anything to pass.
    const unobserved =
      findings.length > 0
        ? undefined
        : entries.length === 0
          ? `no request from ${input.agent} was seen`
          : rule.unobserved?.(ctx);
    return {
      id: rule.id,
      title: rule.title,
      spec_ref: formatSpecRef(rule.specRef),
      violations: findings.length,
      ...(unobserved ? { unobserved } : {}),
    };
  });
  const withoutConnection = entries.filter((e) => !hasCausalFacts(e)).length;
  const epochs = epochViews(slices);
  return {
    schema_version: CLIENT_REPORT_SCHEMA_VERSION,
    agent: input.agent,
    requests: entries.length,
    ...(input.dropped ? { journal_dropped: input.dropped } : {}),
    ...(withoutConnection > 0 ? { without_connection: withoutConnection } : {}),
    ...(unattributed ? { unattributed } : {}),
    from: epochs.at(-1)?.from ?? entries[0]?.time,
    to: epochs.at(-1)?.to ?? entries.at(-1)?.time,
    ...(epochs.length > 0 ? { epochs } : {}),
    options,
    rules,
    violations,
    timeline: timelineOf(entries, input.agent),
  };
}

/** The closing line of a report that judged nothing. */
export const nothingToGrade = (agent: string) =>
  `Nothing to grade: the journal holds no request from ${agent}.`;

/**
 * The report as text: one line per rule, each violation with the requests that show it. Queries and URLs
 * come from the agent (and so from pages it read): control characters are escaped, not sent to the terminal.
 */
export function formatClientReport(report: ClientReport): string {
  const lines = [
    `Client behaviour report for ${report.agent}: ${report.requests} requests${report.epochs ? ` in ${report.epochs.length} clock epochs` : report.from ? ` (${report.from} to ${report.to})` : ''}`,
    ...(report.journal_dropped
      ? [
          `Only the most recent requests are judged: the journal dropped ${report.journal_dropped} older ones (of all agents); raise journal.capacity to keep more.`,
        ]
      : []),
    ...(report.epochs ?? []).map((e, i) =>
      i === 0
        ? `Clock epoch ${e.epoch}: ${e.requests} request(s), ${e.from} to ${e.to}. The gateway clock was moved back since: requests of different epochs are never compared as reactions or waits.`
        : `Clock epoch ${e.epoch} began (the gateway clock was moved back) before #${e.first_seq}: ${e.requests} request(s), ${e.from} to ${e.to}.`,
    ),
    ...(report.unattributed
      ? [
          `Not judged: ${report.unattributed.requests} request(s) of the journal belong to no agent (${report.unattributed.reasons.map((r) => `${r.requests} with ${r.reason}`).join('; ')}); if any were ${report.agent}'s, this report could not see them.`,
        ]
      : []),
    ...(report.without_connection
      ? [
          `Judged without connection or delivery facts for ${report.without_connection} of ${report.requests} requests (a journal written by hand, or an adapter that records neither): requests within ${report.options.graceMs} ms of a refusal's answer were taken as already in flight, and requests within 10 ms of each other as sent together.`,
        ]
      : []),
    '',
  ];
  for (const rule of report.rules) {
    const label = rule.violations > 0 ? 'FAIL' : rule.unobserved ? 'NOT OBSERVED' : 'PASS';
    lines.push(`${label.padEnd(4)}  ${rule.id.padEnd(27)} ${rule.spec_ref}`);
    if (rule.unobserved) lines.push(`        not observed, not passed: ${rule.unobserved}`);
    const ofRule = report.violations.filter((x) => x.rule === rule.id);
    for (const v of ofRule.slice(0, SHOWN_VIOLATIONS)) {
      lines.push(`        ${v.message}`);
      if (v.inference)
        lines.push(
          `        inference: ${v.inference} (what this rule cannot tell apart: ${v.cannot_tell_apart})`,
        );
      for (const r of v.requests.slice(0, SHOWN_REQUESTS)) {
        const extra = [
          r.connection !== undefined ? `conn ${r.connection}` : '',
          r.retry_after !== undefined ? `Retry-After ${r.retry_after}` : '',
          r.query ?? r.url ?? '',
        ]
          .filter(Boolean)
          .join('  ');
        lines.push(
          `          ${r.time.slice(11, 23)}  ${describe(r as JournalEntry)}${extra ? `  ${extra}` : ''}`,
        );
      }
      if (v.requests.length > SHOWN_REQUESTS)
        lines.push(
          `          and ${v.requests.length - SHOWN_REQUESTS} more requests (the JSON report lists them all)`,
        );
    }
    if (ofRule.length > SHOWN_VIOLATIONS)
      lines.push(
        `        and ${ofRule.length - SHOWN_VIOLATIONS} more violations of ${rule.id} (the JSON report lists them all)`,
      );
  }
  const count = report.violations.length;
  const unseen = unobservedRules(report).map((r) => r.id);
  lines.push(
    '',
    report.requests === 0
      ? nothingToGrade(report.agent)
      : count === 0
        ? unseen.length === 0
          ? `No violations of ${report.rules.length} rules.`
          : `No violations seen, but ${unseen.length} of ${report.rules.length} rules not observed (${unseen.join(', ')}): not a pass.`
        : `${count} violation(s) of ${report.rules.filter((r) => r.violations > 0).length} of ${report.rules.length} rules${unseen.length > 0 ? `; not observed: ${unseen.join(', ')}` : ''}.`,
  );
  return printable(lines.join('\n'));
}
