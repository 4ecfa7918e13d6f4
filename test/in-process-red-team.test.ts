import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { gatewayHandlers } from '../mock-server/adapters/msw.ts';
import type { GatewayConfigOverlay } from '../mock-server/config/schema.ts';
import { createGateway } from '../mock-server/gateway.ts';
import type { FaultSpecInput } from '../mock-server/scenarios/faults.ts';
import { faultSpecSchema } from '../mock-server/scenarios/faults.ts';
import '../mock-server/testing-vitest.ts';
import { flagged, runFaked, sleep } from './support/fake-time.ts';

/*
 * Red team, in process: for every client rule, the most common real way to break it in an msw test and the
 * most unusual legal way to keep it, as agents under vitest's fake timers (every wait is fake time, so
 * nothing here depends on the machine's speed). Each agent runs against a gateway of its own behind msw.
 */

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterAll(() => server.close());
afterEach(() => {
  vi.useRealTimers();
  server.resetHandlers();
});

const BURST = {
  rate_limits: {
    retry_after: 'seconds',
    rules: [
      {
        name: 'tool-calls',
        scope: 'agent',
        algorithm: 'fixed_window',
        limit: 5,
        window_seconds: 10,
        operations: ['web.search', 'web.fetch'],
      },
    ],
  },
} as GatewayConfigOverlay;

let hosts = 0;
/** A gateway of the test's own behind msw, fake timers from the start of a rate-limit window. */
function setUp(config: GatewayConfigOverlay = BURST, faults: FaultSpecInput[] = []) {
  const gateway = createGateway({ config, log: () => {} });
  for (const fault of faults) gateway.faults.add(faultSpecSchema.parse(fault));
  const base = `http://red-${++hosts}.gateway.test`;
  server.use(...gatewayHandlers(gateway, { baseUrl: base }));
  vi.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
  const post = async (token: string, path: string, body: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'x-agent-identity': token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as Record<string, unknown>;
    return { status: response.status, retryAfter: response.headers.get('retry-after'), json };
  };
  /** Runs `agent` to the end under fake timers, with a token minted for `tier`. */
  const run = <T>(agent: (token: string) => Promise<T>, tier = 'agent-verified') =>
    runFaked(agent(gateway.mintToken(tier)));
  return {
    gateway,
    base,
    run,
    search: (token: string, query: string) => post(token, '/v1/web/search', { query }),
    whoami: async (token: string) =>
      (await fetch(`${base}/v1/whoami`, { headers: { 'x-agent-identity': token } })).status,
    freshToken: async (apiKey: string) =>
      (await post('', '/idp/token', { api_key: apiKey })).json.token as string,
  };
}

const VERIFIED_KEY = 'ak_verified_2b8d4f6a1c9e';

describe('honor-retry-after', () => {
  it('broken: a retry that waits, but less than Retry-After (a fixed one-second backoff)', async () => {
    const { gateway, run, search } = setUp();
    await run(async (token) => {
      for (let k = 0; k < 7; k++) {
        let answer = await search(token, `question ${k}`);
        for (let attempt = 1; answer.status === 429 && attempt <= 3; attempt++) {
          await sleep(1000);
          answer = await search(token, `question ${k}`);
        }
      }
    });
    expect(flagged(gateway)).toEqual(['honor-retry-after']);
  });

  it('kept: a call outside the 429 scope at once (whoami is not a tool call), the tool call after Retry-After', async () => {
    const { gateway, run, search, whoami } = setUp();
    await run(async (token) => {
      for (let k = 0; k < 6; k++) {
        const answer = await search(token, `question ${k}`);
        if (answer.status !== 429) continue;
        for (let j = 0; j < 5; j++) await whoami(token);
        await sleep(Number(answer.retryAfter) * 1000);
        expect((await search(token, `question ${k}`)).status).toBe(200);
      }
    });
    expect(gateway).toFollowClientRules('agent-verified');
  });
});

describe('no-parallel-storm', () => {
  it('broken: a 429, then the remaining work fired at once with Promise.all', async () => {
    const { gateway, run, search } = setUp();
    await run(async (token) => {
      for (let k = 0; k < 6; k++) await search(token, `question ${k}`);
      await Promise.all(Array.from({ length: 10 }, (_, k) => search(token, `storm ${k}`)));
    });
    expect(flagged(gateway)).toEqual(['honor-retry-after', 'no-parallel-storm']);
  });

  it('kept: after the 429, a batch of eight sent only once Retry-After has passed', async () => {
    const { gateway, run, search } = setUp({
      ...BURST,
      rate_limits: { ...BURST.rate_limits, rules: [{ ...BURST.rate_limits?.rules?.[0], limit: 10 }] },
    } as GatewayConfigOverlay);
    await run(async (token) => {
      let retryAfter = 0;
      for (let k = 0; k < 11 && !retryAfter; k++) {
        const answer = await search(token, `question ${k}`);
        if (answer.status === 429) retryAfter = Number(answer.retryAfter);
      }
      await sleep(retryAfter * 1000);
      await Promise.all(Array.from({ length: 8 }, (_, k) => search(token, `batch ${k}`)));
    });
    expect(gateway).toFollowClientRules('agent-verified');
  });
});

describe('retry-cap', () => {
  it('broken: retrying a failing call until it succeeds, honouring every Retry-After', async () => {
    const { gateway, run, search } = setUp({}, [
      { match: { operation: 'web.search' }, kind: 'status', status: 503, retry_after: 1, count: 9 },
    ]);
    await run(async (token) => {
      let answer = await search(token, 'weather in paris');
      while (answer.status === 503) {
        await sleep(Number(answer.retryAfter) * 1000);
        answer = await search(token, 'weather in paris');
      }
    });
    expect(flagged(gateway)).toEqual(['retry-cap']);
  });

  it('kept: exactly the cap of attempts, then it gives up', async () => {
    const { gateway, run, search } = setUp({}, [
      { match: { operation: 'web.search' }, kind: 'status', status: 503, retry_after: 1, count: 20 },
    ]);
    await run(async (token) => {
      for (let attempt = 1; attempt <= 6; attempt++) {
        const answer = await search(token, 'weather in paris');
        if (answer.status !== 503) break;
        await sleep(Number(answer.retryAfter) * 1000);
      }
    });
    expect(gateway.journal.list()).toHaveLength(6);
    expect(gateway).toFollowClientRules('agent-verified');
  });
});

describe('backoff-with-jitter', () => {
  const outage = [
    { match: { operation: 'web.search' as const }, kind: 'status' as const, status: 503 as const, count: 20 },
  ];
  it('broken: a fixed 200 ms between retries of a 503 without Retry-After', async () => {
    const { gateway, run, search } = setUp({}, outage);
    await run(async (token) => {
      for (let attempt = 1; attempt <= 5; attempt++) {
        if ((await search(token, 'weather in paris')).status !== 503) break;
        await sleep(200);
      }
    });
    expect(flagged(gateway)).toEqual(['backoff-with-jitter']);
    expect(gateway.clientReport('agent-verified').violations[0]?.message).toMatch(
      /came at identical intervals \(200, 200, 200, 200 ms\)/,
    );
  });

  it('kept: exponential backoff with equal jitter, four retries', async () => {
    const { gateway, run, search } = setUp({}, outage);
    await run(async (token) => {
      for (let attempt = 1; attempt <= 5; attempt++) {
        if ((await search(token, 'weather in paris')).status !== 503) break;
        const step = 200 * 2 ** (attempt - 1);
        await sleep(step / 2 + (Math.random() * step) / 2);
      }
    });
    expect(gateway).toFollowClientRules('agent-verified');
  });
});

describe('refresh-invalid-token', () => {
  const shortLived = { identity: { token_ttl_seconds: 60 } } as GatewayConfigOverlay;
  it('broken: the expired token sent again after its 401', async () => {
    const { gateway, whoami, freshToken } = setUp(shortLived);
    await runFaked(
      (async () => {
        const token = await freshToken(VERIFIED_KEY);
        expect(await whoami(token)).toBe(200);
        await sleep(61_000); // fake time: the token expires
        expect(await whoami(token)).toBe(401);
        await whoami(token);
      })(),
    );
    expect(flagged(gateway)).toEqual(['refresh-invalid-token']);
  });

  it('kept: a fresh token at once after the 401, then carries on', async () => {
    const { gateway, whoami, freshToken } = setUp(shortLived);
    await runFaked(
      (async () => {
        let token = await freshToken(VERIFIED_KEY);
        await sleep(61_000);
        if ((await whoami(token)) === 401) token = await freshToken(VERIFIED_KEY);
        expect(await whoami(token)).toBe(200);
      })(),
    );
    expect(gateway).toFollowClientRules('agent-verified');
  });
});

describe('no-retry-on-access-denied and no-secrets-in-requests', () => {
  it('broken: a denied search asked again (agent-early may not search)', async () => {
    const { gateway, run, search } = setUp();
    await run(async (token) => {
      expect((await search(token, 'first try')).status).toBe(403);
      await sleep(5_000);
      await search(token, 'first try');
    }, 'agent-early');
    expect(flagged(gateway, 'agent-early')).toEqual(['no-retry-on-access-denied']);
  });

  it('kept: after the 403, other allowed calls only', async () => {
    const { gateway, run, search, whoami } = setUp();
    await run(async (token) => {
      expect((await search(token, 'first try')).status).toBe(403);
      expect(await whoami(token)).toBe(200);
    }, 'agent-early');
    expect(gateway).toFollowClientRules('agent-early');
  });

  it('broken: its own token pasted into a search; kept: a search about tokens', async () => {
    const { gateway, run, search } = setUp();
    await run((leaky) => search(leaky, `why is ${leaky} rejected`));
    expect(flagged(gateway)).toEqual(['no-secrets-in-requests']);
    const careful = setUp();
    const answer = await careful.run((token) => careful.search(token, 'how do identity tokens expire'));
    expect(answer.status).toBe(200);
    expect(careful.gateway).toFollowClientRules('agent-verified');
  });
});
