import fc from 'fast-check';
import { garbageToken } from '../arbitraries/garbage-token.ts';
import { SPECIAL_TOKENS } from '../arbitraries/special-token.ts';
import type { SuiteRequest } from '../model/suite-request.ts';
import { checkProperty } from './check-cases.ts';
import { type Check, CheckFailure, codeOf, describeResponse, observed } from './check-contract.ts';
import { isJsonContentType, protectedEndpoint, requestFor, SPEC_STATUS_OF_CODE } from './support.ts';

export const errorBodyShape: Check = {
  id: 'errors.json-body',
  title: 'Every error is JSON (JSON content type) with a string code that matches its status',
  specRef: [{ section: 7 }],
  level: 'MUST',
  run: (ctx) => {
    // The 403 is checked once by authz.access-denied: a denied call is not to be repeated.
    const cases: fc.Arbitrary<SuiteRequest> = fc.oneof(
      protectedEndpoint(ctx.endpoints).map((e) => requestFor(e)),
      fc
        .tuple(protectedEndpoint(ctx.endpoints), garbageToken())
        .map(([e, token]) => requestFor(e, { token })),
    );
    // Names a plain object answers (`toString`, `__proto__`) and values a parser reads (`null`, `0`) go to
    // whoami on every seed: a token table kept in `{}` answers them 200, and random tokens find that by luck.
    const examples = SPECIAL_TOKENS.filter((value) => value !== '').map((value) =>
      requestFor(ctx.endpoints.whoami, { token: { kind: 'literal', value } }),
    );
    return checkProperty(
      ctx,
      cases,
      async (request) => {
        const exchange = observed(await ctx.client.send(request));
        const { status, headers, json } = exchange.response;
        const fail = (expected: string, fix: string) => {
          throw new CheckFailure({ expected, actual: describeResponse(exchange), fix, exchange });
        };
        if (status < 400)
          fail('an error status (4xx) for this request', 'refuse requests without a valid token');
        if (!isJsonContentType(headers['content-type'])) {
          fail(
            `Content-Type application/json (or application/*+json) on a ${status} error`,
            'send errors with Content-Type: application/json',
          );
        }
        if (typeof json !== 'object' || json === null || Array.isArray(json))
          fail('a JSON object as the error body', 'send errors as {"code": "...", ...}');
        const code = codeOf(exchange);
        if (typeof code !== 'string' || code === '')
          fail(
            'a non-empty string "code" in the error body',
            'add a stable string "code" to every error body',
          );
        const expectedStatus = SPEC_STATUS_OF_CODE[code as string];
        if (expectedStatus !== undefined && expectedStatus !== status) {
          fail(
            `status ${expectedStatus} with code "${code}"`,
            `send "${code}" with status ${expectedStatus}, as section 7 pairs them`,
          );
        }
      },
      { examples },
    );
  },
};
