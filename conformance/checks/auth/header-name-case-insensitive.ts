import fc from 'fast-check';
import { headerNameCasing } from '../../arbitraries/header-name-casing.ts';
import { checkEach } from '../../check-kit/check-cases.ts';
import { type Check, CheckFailure, describeResponse, observed } from '../../check-kit/check-contract.ts';
import { requestFor, VALID_TOKEN } from '../../check-kit/support.ts';

export const headerNameCaseInsensitive: Check = {
  id: 'auth.header-name-case-insensitive',
  title: 'The X-Agent-Identity header name is matched case-insensitively, on whoami and on the tools',
  specRef: [{ section: 5, rules: [2], note: 'RFC 9110 §5.1' }],
  level: 'MUST',
  needs: ['token'],
  // Every served endpoint in every run: a tool route that reads the raw header is as wrong as whoami.
  run: (ctx) =>
    checkEach(
      ctx,
      Object.fromEntries(
        ctx.servedEndpoints.map((endpoint) => [
          endpoint.name,
          fc.tuple(fc.constant(endpoint), headerNameCasing()),
        ]),
      ),
      async ([endpoint, name]) => {
        const exchange = observed(
          await ctx.client.send(requestFor(endpoint, { token: VALID_TOKEN, tokenHeader: name })),
        );
        const { status } = exchange.response;
        if (status >= 200 && status < 300) return;
        throw new CheckFailure({
          expected: `2xx from ${endpoint.method} ${endpoint.path} with the valid token sent as "${name}: ..."`,
          actual: describeResponse(exchange),
          fix: 'look header names up case-insensitively (HTTP field names are case-insensitive)',
          exchange,
        });
      },
    ),
};
