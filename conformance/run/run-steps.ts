import { SPEC_ENDPOINTS } from '../../vocabulary/endpoints.ts';
import type { Check } from '../check-kit/check-contract.ts';
import { DENIED_TOKEN, VALID_TOKEN } from '../check-kit/support.ts';
import type { SuiteClient } from '../client/http-client.ts';
import { CannotRunError } from '../model/cannot-run-error.ts';
import type { SuiteClock } from '../model/suite-clock.ts';
import type { TokenSource } from '../tokens/token-source.ts';
import { precheckToken } from './token-precheck.ts';

/* Steps of a conformance run (runner.ts): the clock it runs on, the observations checks share, and the
 * preflight that tells a run that cannot work (gateway unreachable, token refused) from a failing gateway. */

/** The run's tokens, by role. */
export interface RunTokens {
  valid?: TokenSource;
  denied?: TokenSource;
  expired?: TokenSource;
  revoked?: TokenSource;
}

/**
 * The clock the run waits on: the one given (default real time). A sleep given without a clock: time as the
 * suite sees it moves by what it slept, so a wait injected away does not leave the pacing waiting for a real
 * clock that never got there.
 */
export function runClock(
  baseClock: SuiteClock,
  givenClock: SuiteClock | undefined,
  injected: ((ms: number) => Promise<void>) | undefined,
): SuiteClock {
  if (!injected) return baseClock;
  let slept = 0;
  return {
    now: () => baseClock.now() + (givenClock ? 0 : slept),
    sleep: async (ms) => {
      slept += ms;
      await injected(ms);
    },
  };
}

/**
 * Observations computed once and shared between checks (the burst), each remembering the check that made it;
 * a check that reads another's says so (`sharedFrom`), rather than "0 requests" as if it observed nothing.
 */
export function createSharedMemo() {
  const memo = new Map<string, { value: Promise<unknown>; owner: string }>();
  /** The check running now, and the earlier checks whose shared observation it read (the burst). */
  let running = '';
  let sharedFrom = new Set<string>();
  return {
    memo: <T>(key: string, compute: () => Promise<T>) => {
      const entry = memo.get(key);
      if (entry) {
        if (entry.owner !== running) sharedFrom.add(entry.owner);
        return entry.value as Promise<T>;
      }
      const value = compute();
      memo.set(key, { value, owner: running });
      return value;
    },
    /** A check begins: what it reads from now on is counted as its own or as shared. */
    begin(checkId: string) {
      running = checkId;
      sharedFrom = new Set();
    },
    /** The earlier checks whose observations the running check read. */
    sharedFrom: (): ReadonlySet<string> => sharedFrom,
  };
}

/**
 * Before any check: the gateway answers /health, every token source yields a token, and the valid and denied
 * tokens are accepted at least once (when a selected check needs them). Else the run's input is wrong (exit 2).
 */
export async function preflight(
  client: SuiteClient,
  baseUrl: string,
  tokens: RunTokens,
  checks: readonly Check[],
): Promise<void> {
  const probe = await client.send({
    method: SPEC_ENDPOINTS.health.method,
    path: SPEC_ENDPOINTS.health.path,
  });
  if (probe.response.status === 0) {
    throw new CannotRunError(`cannot reach the gateway at ${baseUrl}: ${probe.response.error}`);
  }
  for (const source of [tokens.valid, tokens.denied, tokens.expired, tokens.revoked]) {
    try {
      await source?.current();
    } catch (error) {
      throw new CannotRunError(error instanceof Error ? error.message : String(error));
    }
  }
  // A token the gateway never accepts would be blamed on the gateway, check after check: it is the run's
  // input that is wrong. One it accepts at least once is valid, and its refusals are the gateway's.
  for (const [token, source, need] of [
    [VALID_TOKEN, tokens.valid, 'token'],
    [DENIED_TOKEN, tokens.denied, 'deniedToken'],
  ] as const) {
    if (!source || !checks.some((check) => check.needs?.includes(need))) continue;
    await precheckToken(client, token, source);
  }
}
