import type { Exchange } from '../model/suite-request.ts';

/** One exchange of the burst, with when its answer arrived (the burst, its pacing and its probes read it). */
export interface TimedExchange {
  exchange: Exchange;
  /** Local time the response arrived (ms). */
  receivedAt: number;
  /** The first answer was a 503 with a Retry-After: load shed as HTTP says to (RFC 9110 §15.6.4). */
  signalled?: boolean;
  /** Requests the suite had sent when this answer arrived: a later request was sent after it when more. */
  sentBefore?: number;
}
