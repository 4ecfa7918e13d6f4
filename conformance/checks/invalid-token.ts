import fc from 'fast-check';
import { type BadTokenKind, badTokenKinds } from '../arbitraries/bad-token.ts';
import { type Check, CheckFailure, checkEach, describeResponse, observed } from '../check.ts';
import type { Exchange } from '../http-client.ts';
import {
  expectError,
  expectNoServerError,
  protectedEndpoint,
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

export const invalidToken: Check = {
  id: 'auth.invalid-token',
  title:
    '401 invalid_identity_token for bad tokens (random, unicode, long, altered, truncated, extended), never a 5xx',
  specRef: '§5 rule 3, §7',
  level: 'MUST',
  run: (ctx) => {
    const kinds = badTokenKinds({ derived: ctx.has.token });
    const categories = Object.fromEntries(
      Object.entries(kinds).map(([kind, token]) => [kind, fc.tuple(protectedEndpoint(ctx.endpoints), token)]),
    );
    return checkEach(ctx, categories, async ([endpoint, token], kind) => {
      judge(kind as BadTokenKind, observed(await ctx.client.send(requestFor(endpoint, { token }))));
    });
  },
};
