import { describe, expect, it } from 'vitest';
import { fromWebRequest } from '../adapters/fetch.ts';
import { createClock } from '../clock.ts';
import { createGateway } from '../gateway.ts';
import { faultSpecSchema } from '../scenarios/faults.ts';
import { createAgentNames } from './agent-names.ts';
import { adminKeyRefusal, callContext, faultAnswer, nameAgent } from './exchange.ts';

const noWhoami = () => {
  throw new Error('the target is not asked in these tests');
};
const setup = (method = 'POST', path = '/v1/web/search') => {
  const gateway = createGateway({
    config: { tools: { 'web.extract': { path: '/v1/web/extract', tiers: ['verified'] } } },
    serveIdentityProvider: false,
    clock: createClock({ frozen: true, startAt: Date.UTC(2031, 0, 1) }),
    log: () => {},
  });
  const request = fromWebRequest(new Request(`http://proxy.test${path}`, { method }));
  const names = createAgentNames(noWhoami, 1000);
  return { gateway, runtime: gateway.runtime, request, names };
};

describe('one exchange through the proxy, step by step', () => {
  it("the call's context: its operation, a request id, the proxy's clock", () => {
    const { runtime, request } = setup();
    const ctx = callContext(request, runtime, 'web.search', 12.5);
    expect(ctx).toMatchObject({ request, runtime, note: { operation: 'web.search' }, started: 12.5 });
    expect(ctx.at).toBe(Date.UTC(2031, 0, 1));
    expect(ctx.requestId).toMatch(/\S/);
  });

  it('names no agent without a token, at once', () => {
    const { runtime, request, names } = setup();
    const ctx = callContext(request, runtime, 'web.search');
    expect(nameAgent(names, runtime, ctx, undefined)).toBeUndefined();
    expect(ctx.note.token).toBeUndefined();
  });

  it("a token first seen on a GET whoami is named by that whoami's own answer, no request to the target", async () => {
    const { runtime, names } = setup();
    const request = fromWebRequest(new Request('http://proxy.test/v1/whoami'));
    const ctx = callContext(request, runtime, 'whoami');
    const namedByThis = nameAgent(names, runtime, ctx, 'tok-a');
    expect(typeof namedByThis).toBe('function');
    expect(ctx.note.token).toMatch(/^tok_/);
    (namedByThis as (name: string) => void)('agent-a');
    expect(await names.of('tok-a', undefined)).toBe('agent-a');
  });

  it('any other call asks the name once (here already known) and notes the agent', async () => {
    const { runtime, request, names } = setup();
    names.byToken.set('tok-b', Promise.resolve('agent-b'));
    const ctx = callContext(request, runtime, 'web.search');
    const naming = nameAgent(names, runtime, ctx, 'tok-b');
    expect(naming).toBeInstanceOf(Promise);
    expect(await naming).toBeUndefined();
    expect(ctx.note.agent).toBe('agent-b');
  });

  it("a URL carrying the proxy's admin key: its own 400, noted as such", async () => {
    const { runtime, request } = setup();
    const ctx = callContext(request, runtime, 'web.search');
    const answer = adminKeyRefusal(ctx);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'invalid_request', proxy: true });
    expect(ctx.note.fault).toBe('proxy:admin_key_in_url');
  });

  it('a fault armed on the proxy strikes its targets, extra tools included; nothing armed answers nothing at once', async () => {
    const { gateway, runtime, request } = setup();
    const targets = new Set(['health', 'whoami', 'web.search', 'web.fetch', 'web.extract']);
    const ctxOf = (operation: string) => callContext(request, runtime, operation);
    expect(faultAnswer(runtime, ctxOf('web.extract'), targets)).toBeUndefined();
    gateway.faults.add(faultSpecSchema.parse({ kind: 'status', status: 502, count: 2 }));
    // Not a target (the identity provider's token endpoint, other paths): never struck.
    expect(faultAnswer(runtime, ctxOf('idp.token'), targets)).toBeUndefined();
    const ctx = ctxOf('web.extract');
    const struck = await faultAnswer(runtime, ctx, targets);
    expect(struck?.status).toBe(502);
    expect(JSON.parse(struck?.body ?? '{}')).toMatchObject({ code: 'upstream_error', fault: 'fault-1' });
    expect(ctx.note.fault).toBe('fault-1');
  });
});
