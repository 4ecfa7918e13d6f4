import type { SpecRef } from '../../spec/spec-ref.ts';
import type { RateLimitRule } from '../config/schema.ts';
import type { JournalEntry } from '../journal/journal.ts';
import type { Corpus } from '../providers/corpus.ts';

/** Thresholds of the client rules; every one can be changed per report. */
export interface ClientReportOptions {
  /** Most consecutive failed attempts of one request (429, 5xx, dropped) before it is an uncapped retry loop. */
  retryCap: number;
  /** Requests arriving this soon after a 429 was answered were already in flight, not a reaction to it. */
  graceMs: number;
  /** Most requests an agent may have in flight while a 429 is in force. */
  maxConcurrencyAfter429: number;
  /** How long a 429 without Retry-After asks for restraint (the parallel-storm rule). */
  quietMs: number;
}

export const DEFAULT_REPORT_OPTIONS: ClientReportOptions = {
  retryCap: 6,
  graceMs: 100,
  maxConcurrencyAfter429: 2,
  quietMs: 1000,
};

/** What every rule sees: one agent's journal entries, oldest first, and the gateway's setup. */
export interface RuleContext {
  agent: string;
  entries: readonly JournalEntry[];
  rateLimitRules: readonly RateLimitRule[];
  corpus: Corpus;
  options: ClientReportOptions;
}

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
}
