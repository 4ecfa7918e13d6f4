/** How binding a rule is: a failed MUST fails a CI run; a failed SHOULD only with --strict. */
export type Level = 'MUST' | 'SHOULD';

/**
 * pass: the property held for every generated case. fail: a counterexample was found. skipped: the check
 * could not run (with the reason, e.g. no denied token given). inconclusive: it ran but could not observe
 * what it needs (e.g. no 429 within the request budget). Only `pass` is a pass.
 */
export type Verdict = 'pass' | 'fail' | 'skipped' | 'inconclusive';

/** How to see a failure again: a curl command (tokens redacted) and the fast-check replay coordinates. */
export interface Reproduction {
  curl?: string;
  seed?: number;
  path?: string;
  counterexample?: string;
  /** The agent-gateway command that replays the shrunk counterexample. */
  replay?: string;
}

export interface CheckResult {
  id: string;
  title: string;
  specRef: string;
  level: Level;
  verdict: Verdict;
  message: string;
  reproduction?: Reproduction;
  durationMs: number;
  requests: number;
}
