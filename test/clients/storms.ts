import { request as httpRequest } from 'node:http';
import type { GatewayConfigOverlay } from '../../mock-server/config/schema.ts';
import { type Answer, arrivedTogether, fetchPage, retryAfterMs, search, sleep } from './call.ts';
import type { ClientContext, ClientProgram } from './types.ts';

/*
 * Storms on new connections (issue 33): a batch under way when a 429 is answered lets a queued request go out
 * on a new connection for each slot an answer frees, not six at once (mock-server/client-report/facts/
 * reactions.ts, `joinBatch`). One program breaks it (six new connections at once right after one slow
 * answer) and one keeps it the most unusual legal way (a new connection for every request, one after each
 * answer, in the same place).
 */

/** A call on a connection of its own (no keep-alive), as a client without a pool opens one per request. */
function onNewConnection(ctx: ClientContext, path: string, body?: unknown): Promise<number> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve) => {
    const request = httpRequest(
      `${ctx.baseUrl}${path}`,
      {
        method: text === undefined ? 'GET' : 'POST',
        agent: false,
        headers: {
          'x-agent-identity': ctx.token,
          ...(text === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', () => resolve(0));
    request.end(text);
  });
}

/** web.fetch takes 600 ms: a slow call on its way while the 429 is answered. */
const slowFetch = (searchLimit: number, windowSeconds: number): GatewayConfigOverlay => ({
  tools: { 'web.fetch': { latency_ms: 600 } },
  rate_limits: {
    rules: [
      {
        name: 'search-limit',
        scope: 'agent_tool',
        algorithm: 'token_bucket',
        limit: searchLimit,
        window_seconds: windowSeconds,
        operations: ['web.search'],
      },
    ],
  },
});

/** Searches one after another (over the pool) until one is refused with 429. */
async function searchUntilLimited(
  ctx: ClientContext,
  prefix: string,
): Promise<{ answer: Answer; query: string }> {
  for (let k = 0; k < 10; k++) {
    const query = `${prefix} ${k}`;
    const answer = await search(ctx, query);
    if (answer.status === 429) return { answer, query };
  }
  throw new Error('no 429 came: the scenario should limit searches within 10 calls');
}

export const STORMS: ClientProgram[] = [
  {
    name: 'storm-on-new-connections-after-slow-answer',
    verdict: 'bad',
    rules: ['honor-retry-after', 'no-parallel-storm'],
    reason:
      'a slow fetch is on its way when a search meets a 429 (Retry-After 10 s); the moment the fetch is answered the agent fires six searches at once, each on a new connection: one answer frees one slot, so at most one of them (two, counting the 429’s own) was a queued request going out; the rest were sent together with the 429 in hand',
    agent: 'agent-verified',
    // Three searches per 30 s: the 429's Retry-After (10 s) still holds when the storm comes, however slowly
    // a loaded machine runs the program.
    scenario: { config: slowFetch(3, 30) },
    timing: ['no-parallel-storm'],
    // Fired at once, as meant: five or more of them within 10 ms (at most two take the freed slots).
    timingHeld: (entries) => arrivedTogether(entries, 'after the slow answer ', 5),
    async run(ctx) {
      const slow = fetchPage(ctx, 'https://docs.example/quarterly-report');
      await sleep(20);
      await searchUntilLimited(ctx, 'before the slow answer');
      await slow;
      await Promise.all(
        Array.from({ length: 6 }, (_, k) =>
          onNewConnection(ctx, '/v1/web/search', { query: `after the slow answer ${k}` }),
        ),
      );
    },
  },
  {
    name: 'new-connection-per-answer-after-slow-answer',
    verdict: 'good',
    rules: [],
    reason:
      'the same slow fetch on its way when a search meets a 429 (Retry-After 1 s); once the fetch is answered the agent checks in six times with whoami (outside the limit’s scope), each on a new connection opened only after the one before was answered and read (a client with no pool, 5 ms of its own work between calls: a call opened within a millisecond of the answer before it is the ambiguity docs/agent-developers.md names), then waits the Retry-After and sends the refused search again: never more than one request at a time',
    agent: 'agent-verified',
    // One search a second: the Retry-After is 1 s, waited out.
    scenario: { config: slowFetch(1, 1) },
    async run(ctx) {
      const slow = fetchPage(ctx, 'https://docs.example/quarterly-report');
      await sleep(20);
      const refused = await searchUntilLimited(ctx, 'checked one at a time');
      await slow;
      for (let k = 0; k < 6; k++) {
        await onNewConnection(ctx, '/v1/whoami');
        await sleep(5); // reads the answer before the next call
      }
      await sleep((retryAfterMs(refused.answer) ?? 1000) + 50);
      await search(ctx, refused.query);
    },
  },
];
