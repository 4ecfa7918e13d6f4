import { Agent, fetch as undiciFetch } from 'undici';
import type { GatewayConfigOverlay } from '../../mock-server/config/schema.ts';
import { type Answer, arrivedTogether, call, search } from './call.ts';
import type { ClientContext, ClientProgram } from './types.ts';

/*
 * A held-out round's findings on what the rules judge: an extra tool (declared in the config, no `meaning`)
 * gets the retry rules as web.search does, its whole body its meaning; a storm after a 429 on connections
 * already open (an undici Pool warmed by a parallel whoami) is still a storm.
 */

/** web.extract declared in the config (no `meaning`), limited to 2 calls an hour per agent. */
const EXTRACT_LIMITED: GatewayConfigOverlay = {
  tools: { 'web.extract': { path: '/v1/web/extract', tiers: ['verified'] } },
  rate_limits: {
    rules: [
      {
        name: 'extract-limit',
        scope: 'agent_tool',
        algorithm: 'fixed_window',
        limit: 2,
        window_seconds: 3600,
        operations: ['web.extract'],
      },
    ],
  },
};

/** Searches limited to 3 per hour per agent: the fourth is refused with a long Retry-After. */
const SEARCH_LIMITED: GatewayConfigOverlay = {
  rate_limits: {
    rules: [
      {
        name: 'search-limit',
        scope: 'agent_tool',
        algorithm: 'fixed_window',
        limit: 3,
        window_seconds: 3600,
        operations: ['web.search'],
      },
    ],
  },
};

const extract = (ctx: ClientContext, url: string) => call(ctx, 'POST', '/v1/web/extract', { url });

/** Calls `send` until one is refused 429 (at most 10 times); its answer. */
async function until429(send: (k: number) => Promise<Answer>): Promise<Answer> {
  for (let k = 0; k < 10; k++) {
    const answer = await send(k);
    if (answer.status === 429) return answer;
  }
  throw new Error('no 429 came: the scenario should limit within 10 calls');
}

export const REGRESSIONS: ClientProgram[] = [
  {
    name: 'extra-tool-identical-after-429',
    verdict: 'bad',
    rules: ['honor-retry-after', 'no-parallel-storm'],
    reason:
      'an extra tool (web.extract, declared without `meaning`): after a 429 with Retry-After of about an hour, six identical extract calls at once, as on web.search (its whole body is its meaning)',
    agent: 'agent-verified',
    scenario: { config: EXTRACT_LIMITED },
    // Six at once on new connections are told apart by time only: the storm is required when at least
    // three of the extract calls arrived within 10 ms of each other, as sent.
    timing: ['no-parallel-storm'],
    timingHeld: (entries) => {
      // By path: a proxy that does not declare the target's extra tools journals them as `other`.
      const calls = entries.filter((e) => e.path === '/v1/web/extract');
      const together = calls.some(
        (e) => calls.filter((x) => x.real_ms >= e.real_ms && x.real_ms - e.real_ms <= 10).length >= 3,
      );
      return together ? undefined : 'no 3 extract calls arrived within 10 ms of each other';
    },
    async run(ctx) {
      await until429((k) => extract(ctx, `https://example.com/article-${k}`));
      const again = 'https://example.com/article-2';
      await Promise.all(Array.from({ length: 6 }, () => extract(ctx, again)));
    },
  },
  {
    name: 'undici-pool-storm-after-429',
    verdict: 'bad',
    rules: ['honor-retry-after', 'no-parallel-storm'],
    reason:
      'an undici Pool of 8 connections warmed by 8 parallel whoamis, searching one by one until a 429, then 8 searches at once over the idle pool: a storm on connections already open',
    agent: 'agent-verified',
    scenario: { config: SEARCH_LIMITED },
    // Requests on connections already open are told apart by time only (no-parallel-storm's `idleBurst`):
    // the storm is required when at least three of it arrived within 10 ms of each other, as sent.
    timing: ['no-parallel-storm'],
    timingHeld: (entries) => arrivedTogether(entries, 'pool storm', 3),
    async run(ctx) {
      const pool = new Agent({ connections: 8 });
      const fetch: ClientContext['fetch'] = (input, init) =>
        undiciFetch(input, { ...init, dispatcher: pool });
      const own = { ...ctx, fetch };
      try {
        await Promise.all(Array.from({ length: 8 }, () => call(own, 'GET', '/v1/whoami')));
        await until429((k) => search(own, `pool search ${k}`));
        await Promise.all(Array.from({ length: 8 }, (_, k) => search(own, `pool storm ${k}`)));
      } finally {
        await pool.close();
      }
    },
  },
];
