import fc from 'fast-check';
import { requestBody } from '../arbitraries/request-body.ts';
import { type Check, checkProperty, observed } from '../check.ts';
import { expectError, protectedEndpoint } from './support.ts';

export const missingToken: Check = {
  id: 'auth.missing-token',
  title: '401 missing_identity_token on every protected endpoint without the header, whatever the body',
  specRef: '§5 rule 3, §7',
  level: 'MUST',
  run: (ctx) =>
    checkProperty(
      ctx,
      fc.tuple(protectedEndpoint(ctx.endpoints), requestBody()),
      async ([endpoint, body]) => {
        const headers: Record<string, string> = body.contentType ? { 'Content-Type': body.contentType } : {};
        const exchange = observed(
          await ctx.client.send({
            method: endpoint.method,
            path: endpoint.path,
            headers,
            body: endpoint.method === 'GET' ? undefined : body.text,
          }),
        );
        expectError(
          exchange,
          401,
          ['missing_identity_token'],
          'check for the X-Agent-Identity header first, before reading or validating the body, and answer 401 {"code":"missing_identity_token"}',
        );
      },
    ),
};
