import { isSignalledShedding } from '../client/client-pacing.ts';
import type { TimedExchange } from './timed-exchange.ts';

/* How the rate-limit burst (burst-observation.ts) paces itself when the gateway sheds load, and how it tells a limit
 * signalled as 503 from shedding. */

/** Requests a wave of the burst sends at most, at once. */
export const WAVE = 20;
/** Requests sent one at a time, in a row, all shed with 503 + Retry-After: a limit, not load (createShedPacing). */
export const LIMIT_AS_503 = 5;

/**
 * The burst's pace when the gateway sheds load (spec §7: "reduce concurrency"; RFC 9110 §15.6.4: a 503
 * with a Retry-After asks the client to come back later). After a wave with shed answers, the next wave
 * sends as many requests as that wave had admitted (at least one); after a wave with none, one more, up to
 * `WAVE`. Shed requests do not spend the budget (the gateway did not serve them), so the burst serves the
 * limiter the same number of requests however many the shedding turned away; they are bounded on their own
 * (at most the budget again).
 */
export function createShedPacing(budget: number) {
  let concurrency = WAVE;
  let shed = 0;
  let admitted = 0;
  /** Requests sent one at a time and shed, in a row, after the gateway had admitted some. */
  const sequential: TimedExchange[] = [];
  return {
    /** The next wave's size, for an endpoint that has `left` of its share to serve. */
    size: (left: number, told?: number) =>
      Math.min(told !== undefined && concurrency >= WAVE ? Math.max(WAVE, told + 1) : concurrency, left),
    /** Records a wave's answers; returns how many of them the gateway admitted (not shed). */
    record(wave: readonly TimedExchange[]) {
      const turnedAway = wave.filter((t) => isSignalledShedding(t.exchange.response)).length;
      shed += turnedAway;
      if (wave.length === 1 && turnedAway === 1 && admitted > 0) sequential.push(wave[0] as TimedExchange);
      else if (turnedAway < wave.length) sequential.length = 0;
      admitted += wave.length - turnedAway;
      concurrency = turnedAway > 0 ? Math.max(1, wave.length - turnedAway) : Math.min(WAVE, concurrency + 1);
      return wave.length - turnedAway;
    },
    get exhausted() {
      return shed >= budget;
    },
    /**
     * The 503s that show a limit rather than load: LIMIT_AS_503 requests sent one at a time in a row, each
     * shed, after the gateway had admitted some of the burst. Load shedding depends on load, and serves
     * requests that come one at a time; a refusal that persists at concurrency 1 depends on the count of
     * calls in a window: a rate limit, signalled as 503.
     */
    get limitAs503(): readonly TimedExchange[] | undefined {
      return sequential.length >= LIMIT_AS_503 ? [...sequential] : undefined;
    },
    /** Requests the gateway admitted (not shed) so far. */
    get admitted() {
      return admitted;
    },
    get concurrency() {
      return concurrency;
    },
  };
}
