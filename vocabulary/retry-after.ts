/**
 * Spec section 8 ("429 `rate_limited`, with an optional `Retry-After` header") and section 7 ("honor
 * Retry-After when returned"): the header's two forms, read seconds first, then HTTP-date.
 *
 * Retry-After (RFC 9110 section 10.2.3): delay-seconds (1*DIGIT) or an HTTP-date. Recipients must accept
 * all three date formats: IMF-fixdate, the obsolete RFC 850 form and asctime.
 */
const DELAY_SECONDS = /^\d+$/;
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
const IMF_FIXDATE = new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY}, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

type RetryAfter = { kind: 'seconds'; seconds: number } | { kind: 'date'; date: number };

/** Parses a Retry-After value; undefined when it is neither form. */
export function parseRetryAfter(value: string): RetryAfter | undefined {
  const text = value.trim();
  if (DELAY_SECONDS.test(text)) return { kind: 'seconds', seconds: Number(text) };
  if (IMF_FIXDATE.test(text) || RFC850_DATE.test(text)) {
    const date = Date.parse(text);
    return Number.isNaN(date) ? undefined : { kind: 'date', date };
  }
  if (ASCTIME_DATE.test(text)) {
    const date = Date.parse(`${text} GMT`);
    return Number.isNaN(date) ? undefined : { kind: 'date', date };
  }
  return undefined;
}

/**
 * Milliseconds to wait. An HTTP-date is read against the response's own Date header when there is one
 * (so a skewed client clock does not matter), else against the local clock. 0 means now.
 */
export function retryAfterDelayMs(
  retryAfter: RetryAfter,
  responseDate: string | undefined,
  localNow = Date.now(),
): number {
  if (retryAfter.kind === 'seconds') return retryAfter.seconds * 1000;
  const serverNow = responseDate ? Date.parse(responseDate) : Number.NaN;
  return Math.max(0, retryAfter.date - (Number.isNaN(serverNow) ? localNow : serverNow));
}
