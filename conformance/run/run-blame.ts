import type { Check } from '../checks/check-contract.ts';
import type { CheckResult } from '../model/check-result.ts';
import type { Exchange } from '../model/suite-request.ts';
import type { TokenSource } from '../tokens/token-source.ts';
import { blamedRepeat, REPEAT_RULE, withoutTokens } from './run-check.ts';

/* Blame across checks (runner.ts): a failure one check met is reported by the check of the rule it breaks. */

/** The check that judges refusals of a token the gateway accepted elsewhere (token-ledger.ts). */
export const TOKEN_RULE = 'auth.valid-token-accepted';
const TOKEN_BLAME = `That refusal was of a token the gateway accepted too: ${TOKEN_RULE} (spec §4 rule 2) reports the evidence; the token is valid, the gateway is not.`;

/**
 * Blame between the checks of one run, in their order: repeats refused as duplicates go to retry.sequential
 * (spec §4 rule 4) when it is still to run; failures on a refusal of a real token name auth.valid-token-accepted
 * once that check fails.
 */
export function createCrossCheckBlame(
  checks: readonly Check[],
  hasToken: boolean,
  sources: (TokenSource | undefined)[],
) {
  /** Repeats refused as duplicates that checks of other rules met, for the check of that rule. */
  const repeatRefusals: { by: string; exchange: Exchange }[] = [];
  /** Failures on a refusal of a real token: blamed on auth.valid-token-accepted when that check fails. */
  const refusedRealToken: CheckResult[] = [];
  return {
    /** The check at `index` finished: pass on a repeat it met, or (retry.sequential) report those met. */
    async repeats(index: number, result: CheckResult, repeatRefused?: Exchange): Promise<CheckResult> {
      const check = checks[index] as Check;
      // A repeat refused as a duplicate breaks retry safety (spec §4 rule 4), whichever check met it: when
      // retry.sequential is still to run, it is reported there, and the check that met it says so.
      const judgedLater = checks.slice(index + 1).some((c) => c.id === REPEAT_RULE) && hasToken;
      if (repeatRefused && judgedLater) {
        repeatRefusals.push({ by: check.id, exchange: repeatRefused });
        result.message += ` Blamed on ${REPEAT_RULE} (spec §4 rule 4), the check of that rule, which reports this exchange.`;
      }
      // A check that passed its own rule but handed a refused repeat over (retry.concurrent, a copy resent
      // after a wait): with no retry.sequential to report it, it is reported here, where it was met.
      if (repeatRefused && !judgedLater && result.verdict === 'pass') {
        const { unobserved: _notNow, ...own } = result;
        return {
          ...own,
          ...(await withoutTokens(
            blamedRepeat(result, [{ by: check.id, exchange: repeatRefused }]),
            sources,
          )),
        };
      }
      if (
        check.id === REPEAT_RULE &&
        repeatRefusals.length > 0 &&
        result.verdict !== 'fail' &&
        result.verdict !== 'skipped'
      ) {
        const { unobserved: _notNow, ...own } = result;
        return { ...own, ...(await withoutTokens(blamedRepeat(result, repeatRefusals), sources)) };
      }
      return result;
    },
    /** The check finished: remember a refusal of a real token; auth.valid-token-accepted failing names them. */
    tokens(checkId: string, result: CheckResult, realTokenRefused: boolean) {
      if (realTokenRefused) refusedRealToken.push(result);
      if (checkId === TOKEN_RULE && result.verdict === 'fail')
        for (const other of refusedRealToken) other.message += ` ${TOKEN_BLAME}`;
    },
  };
}
