import fc from 'fast-check';
import { type MalformedBodyKind, malformedBodies } from '../arbitraries/malformed-bodies.ts';
import type { Exchange } from '../model/suite-request.ts';
import { checkEach } from './check-cases.ts';
import { type Check, CheckFailure, codeOf, describeResponse, observed } from './check-contract.ts';
import { isJsonContentType, VALID_TOKEN } from './support.ts';

const FIX =
  'answer a client mistake with a 4xx JSON error with a stable "code" (e.g. 400 {"code":"invalid_request"}): catch body-parser errors in a JSON error handler and validate fields before using them';

/** A client mistake gets a JSON 4xx with a code (or is served, if the gateway makes sense of it). */
function judge(kind: MalformedBodyKind, exchange: Exchange): void {
  const { status, headers } = exchange.response;
  if (status >= 200 && status < 300) return;
  const fail = (expected: string, fix = FIX) => {
    throw new CheckFailure({ expected, actual: describeResponse(exchange), fix, exchange });
  };
  const expected = `a 4xx JSON error with a string "code" for a ${kind} body from a valid, allowed caller`;
  if (status === 0 || status >= 500) {
    throw new CheckFailure({
      expected,
      actual: describeResponse(exchange),
      fix: `${FIX}; a client mistake must never cause a 5xx`,
      exchange,
      aboutServerErrors: true,
    });
  }
  if (status === 401 || status === 403) {
    fail(
      `${expected}, not ${status}: the caller's token is valid and allowed, only its body is wrong`,
      'judge the body after the token: a bad body is a 400 (or 413, 415, 422), never a 401 or 403',
    );
  }
  if (status < 400) fail(expected);
  if (!isJsonContentType(headers['content-type'])) fail(`${expected} (JSON content type)`);
  if (typeof codeOf(exchange) !== 'string') fail(`${expected} (a JSON object with a string "code")`);
}

export const malformedBody: Check = {
  id: 'errors.malformed-body',
  title:
    'A malformed, truncated or wrong-typed body from a valid, allowed caller gets a JSON 4xx with a code, never a 5xx, text or HTML',
  specRef: [{ section: 7 }],
  level: 'MUST',
  needs: ['token'],
  run: async (ctx) => {
    const tools = ctx.servedEndpoints.filter((e) => e.body !== undefined);
    if (tools.length === 0)
      return {
        verdict: 'skipped',
        message: 'the valid token may call no tool (--allowed-tools none): no body to send',
      };
    // Every kind of mistake on every tool in every run.
    const categories = Object.fromEntries(
      tools.flatMap((endpoint) =>
        Object.entries(malformedBodies(endpoint.body as string)).map(([kind, body]) => [
          `${kind}@${endpoint.name}`,
          fc.tuple(fc.constant(endpoint), body),
        ]),
      ),
    );
    return checkEach(
      ctx,
      categories,
      async ([endpoint, body], category) => {
        const exchange = observed(
          await ctx.client.send({
            method: endpoint.method,
            path: endpoint.path,
            token: VALID_TOKEN,
            headers: body.contentType ? { 'Content-Type': body.contentType } : {},
            body: body.text,
          }),
        );
        judge(category.split('@')[0] as MalformedBodyKind, exchange);
      },
      { runsPerCategory: Math.max(1, Math.ceil(ctx.numRuns / Object.keys(categories).length)) },
    );
  },
};
