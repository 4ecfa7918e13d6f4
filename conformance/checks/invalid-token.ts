import { type BadTokenKind, badTokenKinds } from '../arbitraries/bad-token.ts';
import { longTokenBoundaries } from '../arbitraries/long-token.ts';
import { SPECIAL_TOKENS } from '../arbitraries/special-token.ts';
import { TRUNCATED_BOUNDARIES } from '../arbitraries/truncated-token.ts';
import type { Exchange } from '../model/suite-request.ts';
import type { TokenValue } from '../model/token-value.ts';
import { checkEach, checkOnce } from './check-cases.ts';
import {
  type Check,
  type CheckContext,
  CheckFailure,
  type CheckOutcome,
  describeResponse,
  observed,
} from './check-contract.ts';
import {
  expectError,
  expectNoServerError,
  protectedEndpoints,
  refusedByServer,
  requestFor,
} from './support.ts';

const FIX =
  'verify the token (signature, expiry, revocation) and answer 401 {"code":"invalid_identity_token"} for anything not accepted';

/** What each kind of bad token may fairly get. */
function judge(kind: BadTokenKind, exchange: Exchange): void {
  expectNoServerError(exchange, `a ${kind} identity token`);
  const { status } = exchange.response;
  if (kind === 'blank') {
    // An all-blank header is empty once HTTP trims it: "missing" and "invalid" are both fair readings.
    expectError(exchange, 401, ['missing_identity_token', 'invalid_identity_token'], FIX);
    return;
  }
  if (refusedByServer(kind, exchange)) return;
  if (status >= 200 && status < 300) {
    throw new CheckFailure({
      expected: '401 invalid_identity_token',
      actual: `${describeResponse(exchange)}: the token was accepted`,
      fix: FIX,
      exchange,
    });
  }
  expectError(exchange, 401, ['invalid_identity_token'], FIX);
}

/**
 * Sends every special token (SPECIAL_TOKENS) to every protected endpoint, in every run: a failure names
 * the token and the endpoint (`special@whoami`); the empty one may fairly read as missing.
 */
async function trySpecialTokens(ctx: CheckContext): Promise<CheckOutcome | undefined> {
  for (const endpoint of protectedEndpoints(ctx.endpoints)) {
    let current = '';
    const outcome = await checkOnce(ctx, async () => {
      for (const value of SPECIAL_TOKENS) {
        current = value;
        const exchange = observed(
          await ctx.client.send(requestFor(endpoint, { token: { kind: 'literal', value } })),
        );
        judge(value === '' ? 'blank' : 'garbage', exchange);
      }
      return '';
    });
    if (outcome.verdict !== 'pass') {
      outcome.message = `[special@${endpoint.name}: token ${JSON.stringify(current)}] ${outcome.message}`;
      return outcome;
    }
  }
  return undefined;
}

export const invalidToken: Check = {
  id: 'auth.invalid-token',
  title:
    '401 invalid_identity_token for bad tokens (random, unicode, long, altered first/middle/last, truncated, extended, and names like __proto__, null, 0) on every endpoint, never a 5xx',
  specRef: [{ section: 5, rules: [3] }, { section: 7 }],
  level: 'MUST',
  run: async (ctx) => {
    const special = await trySpecialTokens(ctx);
    if (special?.verdict === 'fail' && !special.unobserved) return special;
    // Every kind on every endpoint in every run, then sampled within: a verifier that is wrong on one
    // endpoint only (a tool service checking tokens its own way) is caught on every seed, not by chance.
    const kinds = Object.entries(badTokenKinds({ derived: ctx.has.token }));
    const endpoints = protectedEndpoints(ctx.endpoints);
    const categories = Object.fromEntries(
      kinds.flatMap(([kind, token]) =>
        endpoints.map((endpoint) => [`${kind}@${endpoint.name}`, token.map((t) => ({ endpoint, token: t }))]),
      ),
    );
    // On every endpoint on every seed, before the generated cases: the header-size boundaries real servers
    // have (1, 2, 4 and 8 KiB, just below and above; long-token.ts says why), and the valid token cut by its
    // last character and by half (a prefix compare, a verifier reading a fixed length): random cuts find
    // those only by luck, and every endpoint's category draws the same cut on a seed.
    const fixed: Partial<Record<BadTokenKind, TokenValue[]>> = {
      ...longTokenBoundaries(),
      ...(ctx.has.token && { truncated: TRUNCATED_BOUNDARIES }),
    };
    const examples = Object.fromEntries(
      Object.entries(fixed).flatMap(([kind, tokens]) =>
        endpoints.map((endpoint) => [
          `${kind}@${endpoint.name}`,
          tokens.map((token) => ({ endpoint, token })),
        ]),
      ),
    );
    const perKind = Math.max(endpoints.length, Math.ceil(ctx.numRuns / kinds.length));
    const generated = await checkEach(
      ctx,
      categories,
      async ({ endpoint, token }, category) => {
        const kind = category.split('@')[0] as BadTokenKind;
        judge(kind, observed(await ctx.client.send(requestFor(endpoint, { token }))));
      },
      { runsPerCategory: Math.ceil(perKind / endpoints.length), examples },
    );
    if (generated.verdict === 'pass' && special) return special;
    if (generated.verdict === 'pass')
      generated.message = `${generated.message}; and ${SPECIAL_TOKENS.length} special tokens (${SPECIAL_TOKENS.slice(0, 5).join(', ')}, empty, null, 0, ...) on every endpoint`;
    return generated;
  },
};
