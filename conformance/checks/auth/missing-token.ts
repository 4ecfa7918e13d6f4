import fc from 'fast-check';
import { type RequestBody, requestBody } from '../../arbitraries/request-body.ts';
import { checkEach } from '../../check-kit/check-cases.ts';
import {
  type Check,
  CheckFailure,
  codeOf,
  describeResponse,
  type Endpoint,
  observed,
} from '../../check-kit/check-contract.ts';
import { expectError, isJsonContentType, protectedEndpoints } from '../../check-kit/support.ts';

// Statuses a gateway may give a malformed body before it looks for the token: the spec does not order
// the identity check against body validation, so answering the body first is allowed.
type Case = fc.Arbitrary<[Endpoint, 'as configured' | RequestBody]>;
const BODY_ERRORS = new Set([400, 413, 415, 422]);
/** Bodies labelled JSON that are not: always tried without a token (see the broken-json categories). */
const BROKEN_JSON = ['{', '{"query":', 'not json', '{"url": "https://example.com/",}'];

export const missingToken: Check = {
  id: 'auth.missing-token',
  title:
    '401 missing_identity_token on every protected endpoint without the header (a malformed body may be refused first)',
  specRef: [{ section: 5, rules: [3] }, { section: 7 }],
  level: 'MUST',
  // Every endpoint in every run (a route that forgot its auth middleware is caught on every seed).
  run: (ctx) =>
    checkEach(
      ctx,
      Object.fromEntries<Case>([
        ...protectedEndpoints(ctx.endpoints).map((endpoint): [string, Case] => [
          endpoint.name,
          fc.tuple(
            fc.constant(endpoint),
            fc.oneof(fc.constant('as configured' as const), requestBody()) as fc.Arbitrary<
              'as configured' | RequestBody
            >,
          ),
        ]),
        // Broken JSON without a token on each tool, in every run, not left to the seed: a handler that
        // parses the body before it looks for the token crashes on exactly this.
        ...protectedEndpoints(ctx.endpoints)
          .filter((endpoint) => endpoint.method === 'POST')
          .map((endpoint): [string, Case] => [
            `broken-json@${endpoint.name}`,
            fc.tuple(
              fc.constant(endpoint),
              fc
                .constantFrom(...BROKEN_JSON)
                .map((text): 'as configured' | RequestBody => ({ contentType: 'application/json', text })),
            ),
          ]),
      ]),
      async ([endpoint, body]) => {
        const configured = body === 'as configured' || endpoint.method === 'GET';
        const sent =
          body !== 'as configured'
            ? body
            : endpoint.body !== undefined
              ? { contentType: 'application/json', text: endpoint.body }
              : {};
        const headers: Record<string, string> = sent.contentType ? { 'Content-Type': sent.contentType } : {};
        const exchange = observed(
          await ctx.client.send({
            method: endpoint.method,
            path: endpoint.path,
            headers,
            body: endpoint.method === 'GET' ? undefined : sent.text,
          }),
        );
        const { status } = exchange.response;
        if (!configured && BODY_ERRORS.has(status)) {
          // The body was refused before the token was looked for: allowed, as an error the spec's way.
          if (
            isJsonContentType(exchange.response.headers['content-type']) &&
            typeof codeOf(exchange) === 'string'
          )
            return;
          throw new CheckFailure({
            expected: `401 with code "missing_identity_token", or a body error as JSON with a string "code"`,
            actual: describeResponse(exchange),
            fix: 'answer errors as JSON with a stable "code" (spec section 7), or check the token before the body',
            exchange,
          });
        }
        expectError(
          exchange,
          401,
          ['missing_identity_token'],
          'answer a request without the X-Agent-Identity header 401 {"code":"missing_identity_token"}',
        );
      },
    ),
};
