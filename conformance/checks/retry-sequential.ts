import fc from 'fast-check';
import type { Exchange } from '../model/suite-request.ts';
import { checkProperty } from './check-cases.ts';
import {
  type Check,
  type CheckContext,
  CheckFailure,
  codeOf,
  describeResponse,
  type Endpoint,
  observed,
  repeatRefusedFix,
  SPEC_RETRY_SAFE,
} from './check-contract.ts';
import { expectNoServerError, requestFor, VALID_TOKEN } from './support.ts';

/**
 * What a retry must not change: the status, and for an error its code. A 2xx body is a result, whatever
 * its fields are called: a `code` there (a cache status, an HTTP status of the fetched page) may change.
 */
export const outcomeOf = (exchange: Exchange) =>
  exchange.response.status >= 400
    ? `${exchange.response.status} ${String(codeOf(exchange) ?? '')}`.trim()
    : String(exchange.response.status);

/** A refusal that carries Retry-After or RateLimit headers: a limit acting, whatever its status. */
export const limitSignalled = (exchange: Exchange): boolean =>
  exchange.response.status >= 400 &&
  Object.keys(exchange.response.headers).some((name) =>
    /^(retry-after|ratelimit|ratelimit-policy|x-ratelimit-.*|ratelimit-.*)$/i.test(name),
  );

/**
 * Fails when repeats of one call (to `endpoint`) disagree, or when any of them is a 5xx, a conflict (409) or
 * a "duplicate". The fix names the operation: safe to retry (§4 rule 4), or for a write-like tool, sent with
 * its idempotency key, safe to repeat with that key (§7).
 */
export function expectSameOutcome(exchanges: Exchange[], what: string, endpoint: Endpoint): void {
  for (const exchange of exchanges) {
    expectNoServerError(exchange, what, { badInput: false });
    if (
      exchange.response.status === 409 ||
      (exchange.response.status >= 400 && /duplicate|conflict|already/i.test(String(codeOf(exchange) ?? '')))
    ) {
      throw new CheckFailure({
        expected: `the same outcome for every repeat of ${what}`,
        actual: `${describeResponse(exchange)} on a repeat`,
        fix: repeatRefusedFix(endpoint),
        exchange,
        aboutRepeats: true,
      });
    }
  }
  const first = exchanges[0] as Exchange;
  const different = exchanges.find((e) => outcomeOf(e) !== outcomeOf(first));
  if (different) {
    const limit = limitSignalled(different);
    if (limit) {
      throw new CheckFailure({
        expected: `every repeat of ${what} to answer like the first (${outcomeOf(first)}), or a 429 if a rate limit acts (spec §8)`,
        actual: `${describeResponse(different)}: a limit signalled as ${different.response.status} (it carries rate-limit headers), not a retry-safety fault`,
        fix: `signal the rate limit as 429 with Retry-After (spec §8), not as ${different.response.status}; ratelimit.burst-429 names this fault`,
        exchange: different,
        aboutRepeats: true,
      });
    }
    throw new CheckFailure({
      expected: `every repeat of ${what} to answer like the first (${outcomeOf(first)})`,
      actual: describeResponse(different),
      fix: endpoint.writeLike
        ? `answer a repeat of ${endpoint.method} ${endpoint.path} (${endpoint.name}) carrying the first call's idempotency key as the first was answered (spec §7): neither fail differently nor act again`
        : `make ${endpoint.method} ${endpoint.path} (${endpoint.name}) idempotent: a repeat must neither fail differently nor change state${SPEC_RETRY_SAFE.includes(endpoint.name) ? '' : `, or declare it write-like (--tool ${endpoint.name}:write-like=${endpoint.path}) if it is`}`,
      exchange: different,
      aboutRepeats: true,
    });
  }
}

/**
 * A property over repeats of one valid call: a served endpoint, how many times to send it (2 to `most`), and
 * `send`, which sends it once more with the valid token.
 */
export const checkRepeats = (
  ctx: CheckContext,
  most: number,
  body: (endpoint: Endpoint, times: number, send: () => Promise<Exchange>) => Promise<void>,
) =>
  checkProperty(
    ctx,
    fc.tuple(fc.constantFrom(...ctx.servedEndpoints), fc.integer({ min: 2, max: most })),
    ([endpoint, times]) =>
      body(endpoint, times, () => ctx.client.send(requestFor(endpoint, { token: VALID_TOKEN }))),
    // Every served endpoint, repeated the most times, on every seed: which endpoint a seed draws decides
    // nothing (a gateway that refuses a repeated fetch only is found whatever the seed). An endpoint whose
    // limit has a slow window (a minute, say) is repeated twice: the fewest calls that show a repeat.
    {
      examples: ctx.servedEndpoints.map(
        (endpoint) => [endpoint, ctx.slow?.(endpoint) ? 2 : most] as [Endpoint, number],
      ),
    },
  );

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
