import type { Exchange } from '../model/suite-request.ts';
import { type Check, describeResponse, isRepeatRefusal, observed } from './check-contract.ts';
import { checkRepeats, expectSameOutcome } from './retry-sequential.ts';

/**
 * retry.concurrent (spec §4 rule 4, "safe to retry"): copies of one whoami, search or fetch sent at the same
 * moment get the same outcome. What it judges is concurrency: the copies that reached the gateway together.
 *
 * A copy the gateway limited (429) is resent by the suite after the wait the 429 asked: it no longer arrives
 * with its siblings but after a pause, as a client's retry after backoff does. If that resent copy is refused
 * as a duplicate, the gateway refused a repeat sent after a wait: a break of retry safety over time, which
 * retry.sequential judges (it runs after this check, and reports the exchange, naming this check). Judging it
 * here too would make this verdict depend on whether the seed's cases happened to run into the limit (how
 * many requests came before), not on what the gateway does with copies sent at once. So:
 * - a duplicate refusal of a copy sent at the first attempt fails this check (an in-flight lock: a copy
 *   arriving while its twin is served gets 409);
 * - a duplicate refusal of a copy resent after a 429's wait is handed to retry.sequential; this check judges
 *   the other copies, and says in its message what it handed over. Without retry.sequential in the run
 *   (`--only`), the refusal is reported here, as a failure (run-blame.ts).
 * A case whose copies the limit refused, all or all but one, observed no copies arriving together: it is
 * sent again (SEND_ROUNDS in all at most), right after, when the limit has let the resent copies through.
 * A gateway whose only fault is a "replay guard" refusing a fetch that comes more than 5 s after the agent's
 * previous call therefore passes this check and fails retry.sequential, on every seed; one refusing every
 * repeat of a fetch fails both, on every seed (its copies sent at once, at their first attempt, are refused).
 */
/*
 * A write-like tool (declared so, spec §7) is sent with its idempotency key, the same on every copy. While
 * the first copy is being served, the IETF idempotency-key draft lets a gateway answer a copy with the same
 * key 409 ("in progress"): such a copy is sent again once the others are answered, and must then get the
 * answer the others got (the stored one, replayed).
 */

/** Rounds of one case at most, until its copies go out together at their first attempt. */
const SEND_ROUNDS = 3;

export const retryConcurrent: Check = {
  id: 'retry.concurrent',
  title: 'The same whoami, search or fetch sent several times at once gives the same outcome each time',
  specRef: [{ section: 4, rules: [4] }, { section: 7 }],
  level: 'MUST',
  needs: ['token'],
  run: async (ctx) => {
    let afterWait: Exchange | undefined;
    const outcome = await checkRepeats(ctx, 5, async (endpoint, copies, send) => {
      // Until two copies or more went out at once at their first attempt (at most three rounds): a batch the
      // limit refused all but one of was resent after a wait, and shows nothing of copies arriving together.
      for (let round = 0; round < SEND_ROUNDS; round++) {
        const exchanges = (await Promise.all(Array.from({ length: copies }, send))).map(observed);
        const resentRefused = (e: Exchange) => e.attempts > 1 && isRepeatRefusal(e);
        afterWait ??= exchanges.find(resentRefused);
        const what = `${copies} concurrent ${endpoint.method} ${endpoint.path}`;
        const together = exchanges.filter((e) => !resentRefused(e));
        const inProgress = endpoint.writeLike
          ? together.filter((e) => e.attempts === 1 && isRepeatRefusal(e))
          : [];
        const answered = together.filter((e) => !inProgress.includes(e));
        // A copy refused while its twin was in progress, sent again now the twin is answered.
        if (inProgress.length > 0) answered.push(observed(await send()));
        if (answered.length > 1 || inProgress.length > 0) expectSameOutcome(answered, what, endpoint);
        if (exchanges.filter((e) => e.attempts === 1).length > 1) return;
      }
    });
    if (!afterWait || outcome.verdict !== 'pass') return outcome;
    return {
      ...outcome,
      message: `${outcome.message}; a copy resent after waiting out a 429 got ${describeResponse(afterWait)}: a repeat refused after a wait, not a copy sent at once.`,
      repeatRefused: afterWait,
    };
  },
};
