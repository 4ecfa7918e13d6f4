import { headerNameCasing } from '../arbitraries/header-name-casing.ts';
import { type Check, CheckFailure, checkProperty, describeResponse, observed } from '../check.ts';
import { requestFor, VALID_TOKEN } from './support.ts';

export const headerNameCaseInsensitive: Check = {
  id: 'auth.header-name-case-insensitive',
  title: 'The X-Agent-Identity header name is matched case-insensitively',
  specRef: '§5 rule 2 (RFC 9110 §5.1)',
  level: 'MUST',
  needs: ['token'],
  run: (ctx) =>
    checkProperty(ctx, headerNameCasing(), async (name) => {
      const exchange = observed(
        await ctx.client.send(requestFor(ctx.endpoints.whoami, { token: VALID_TOKEN, tokenHeader: name })),
      );
      if (exchange.response.status === 200) return;
      throw new CheckFailure({
        expected: `200 from whoami with the valid token sent as "${name}: ..."`,
        actual: describeResponse(exchange),
        fix: 'look header names up case-insensitively (HTTP field names are case-insensitive)',
        exchange,
      });
    }),
};
