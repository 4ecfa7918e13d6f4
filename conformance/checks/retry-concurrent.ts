import fc from 'fast-check';
import { type Check, observed } from '../check.ts';
import { checkProperty } from '../check-cases.ts';
import { expectSameOutcome } from './retry-sequential.ts';
import { requestFor, VALID_TOKEN } from './support.ts';

export const retryConcurrent: Check = {
  id: 'retry.concurrent',
  title: 'The same whoami, search or fetch sent several times at once gives the same outcome each time',
  specRef: [{ section: 4, rules: [4] }],
  level: 'MUST',
  needs: ['token'],
  run: (ctx) =>
    checkProperty(
      ctx,
      fc.tuple(fc.constantFrom(...ctx.servedEndpoints), fc.integer({ min: 2, max: 5 })),
      async ([endpoint, copies]) => {
        const exchanges = await Promise.all(
          Array.from({ length: copies }, () => ctx.client.send(requestFor(endpoint, { token: VALID_TOKEN }))),
        );
        expectSameOutcome(
          exchanges.map(observed),
          `${copies} concurrent ${endpoint.method} ${endpoint.path}`,
        );
      },
    ),
};
