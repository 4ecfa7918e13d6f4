import { type Check, CheckFailure, describeResponse, observed } from '../../check-kit/check-contract.ts';
import { checkRepeats, expectSameOutcome, outcomeOf } from '../../check-kit/repeated-calls.ts';
import { requestFor, VALID_TOKEN } from '../../check-kit/support.ts';
import type { Exchange } from '../../model/suite-request.ts';

export const retrySequential: Check = {
  id: 'retry.sequential',
  title:
    'Repeating whoami, search and fetch one after another gives the same outcome, with no side effect (a write-like tool: with its idempotency key)',
  specRef: [{ section: 4, rules: [4] }, { section: 7 }],
  level: 'MUST',
  needs: ['token'],
  run: (ctx) =>
    checkRepeats(ctx, 4, async (endpoint, times, send) => {
      const whoami = requestFor(ctx.endpoints.whoami, { token: VALID_TOKEN });
      const before = observed(await ctx.client.send(whoami));
      const repeats: Exchange[] = [];
      for (let i = 0; i < times; i++) repeats.push(observed(await send()));
      expectSameOutcome(repeats, `${endpoint.method} ${endpoint.path}`, endpoint);
      const after = observed(await ctx.client.send(whoami));
      if (outcomeOf(after) !== outcomeOf(before)) {
        throw new CheckFailure({
          expected: `whoami to answer as before the repeats (${outcomeOf(before)})`,
          actual: describeResponse(after),
          fix: 'repeated tool calls must have no observable side effect on the caller',
          exchange: after,
          aboutRepeats: true,
        });
      }
    }),
};
