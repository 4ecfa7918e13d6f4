import type { SpecRef } from '../../vocabulary/spec-ref.ts';
/** How binding a rule is: a failed MUST fails a CI run; a failed SHOULD only with --strict. */
export type Level = 'MUST' | 'SHOULD';

/**
 * pass: the property held for every generated case. fail: a counterexample was found, or the gateway's
 * own answers kept the check from observing anything (`unobserved: 'not-served'`). skipped: the check
 * did not run, for want of something the user did not provide (e.g. no denied token). inconclusive: it
 * ran, but could not observe what it needs (`unobserved` says why). Only `pass` is a pass, and an
 * inconclusive MUST check makes the run exit 2 unless the user accepted it (--allow-unobserved).
 */
export type Verdict = 'pass' | 'fail' | 'skipped' | 'inconclusive';

/**
 * Why a check could not observe what it needs.
 * - `not-served`: the gateway's own answers: it never answered the calls the check needs with anything
 *   but a 429 beyond the suite's waits (a gateway that serves nothing). A failure, never a pass.
 * - `max-wait`: the gateway had served those calls, but later asked for a longer wait than
 *   --max-wait-seconds (or kept answering 429 past the retry cap): raise --max-wait-seconds.
 * - `retry-after-untruthful`: the gateway kept answering 429 although the suite waited the Retry-After it
 *   asked each time (within --max-wait-seconds): its Retry-After is not truthful (ratelimit.retry-after-honoured
 *   judges that rule); no budget of the user's would help.
 * - `rate-limit-budget`: no 429 within --rate-limit-budget requests: the limit is higher than the budget.
 * - `token-refused`: the valid token stopped being accepted during the run (it expired?).
 * - `time-budget`: waiting out the gateway's limits would overrun the run's time budget (--time-budget-seconds).
 * - `suite-error`: the check itself could not run (a bug in the suite: please report it).
 */
export type Unobserved =
  | 'not-served'
  | 'max-wait'
  | 'retry-after-untruthful'
  | 'rate-limit-budget'
  | 'token-refused'
  | 'time-budget'
  | 'suite-error';

/**
 * The request a failure rests on and the answer it got, as sent and received: tokens appear as
 * `<$TOKEN>` / `<$DENIED_TOKEN>` (or, for a made-up token, as the check sent it), and a long body is cut.
 */
export interface ExchangeRecord {
  request: { method: string; url: string; headers: [string, string][]; body?: string };
  /** Status 0 and `error` when no HTTP answer came (refused, reset, timeout). */
  response: {
    status: number;
    headers: Record<string, string>;
    body: string;
    /** Set when `body` was cut: the length of the whole body, in characters. */
    length?: number;
    error?: string;
  };
  /** Attempts the suite's client made (more than 1 after a 429 or a transient 5xx it retried). */
  attempts: number;
}

/** How to see a failure again: a curl command (tokens redacted) and the fast-check replay coordinates. */
export interface Reproduction {
  curl?: string;
  /**
   * For a failure only a burst shows: a shell script that sends the burst again as the suite did and
   * counts the statuses (tokens in $TOKEN).
   */
  script?: string;
  /** The failing request and its answer (new in the JSON report; older readers ignore it). */
  exchange?: ExchangeRecord;
  seed?: number;
  path?: string;
  counterexample?: string;
  /** The agent-gateway command that replays the shrunk counterexample. */
  replay?: string;
}

export interface CheckResult {
  id: string;
  title: string;
  /** The spec sections and rules the check enforces; reports print it with `formatSpecRef`. */
  specRef: SpecRef;
  level: Level;
  verdict: Verdict;
  message: string;
  /** Set when the check could not observe what it needs (an inconclusive, or a not-served failure). */
  unobserved?: Unobserved;
  /**
   * Set when the check was skipped for want of an input the user did not give: the options that would let
   * it run (e.g. `--expired-token or --expired-token-command (...)`). A MUST check skipped so is unobserved.
   */
  enabledBy?: string;
  reproduction?: Reproduction;
  /** Time this check took (ms, on the suite's clock), its waits included; a shared observation is not. */
  durationMs: number;
  /** Requests this check sent itself. */
  requests: number;
  /**
   * Checks whose shared observation this one judged (the rate-limit burst, sent by the first rate-limit
   * check): its requests and time are counted under that check, not this one.
   */
  sharedWith?: string[];
}
