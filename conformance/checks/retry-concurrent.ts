import { type Check, observed } from '../check.ts';
import { checkRepeats, expectSameOutcome } from './retry-sequential.ts';

export const retryConcurrent: Check = {
  id: 'retry.concurrent',
  title: 'The same whoami, search or fetch sent several times at once gives the same outcome each time',
  specRef: [{ section: 4, rules: [4] }],
  level: 'MUST',
  needs: ['token'],
  run: (ctx) =>
    checkRepeats(ctx, 5, async (endpoint, copies, send) => {
      const exchanges = await Promise.all(Array.from({ length: copies }, send));
      expectSameOutcome(exchanges.map(observed), `${copies} concurrent ${endpoint.method} ${endpoint.path}`);
    }),
};
