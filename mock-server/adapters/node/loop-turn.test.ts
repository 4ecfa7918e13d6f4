import { afterAll, describe, expect, it, vi } from 'vitest';
import { createGateway } from '../../gateway.ts';
import { faultSpecSchema } from '../../scenarios/faults.ts';
import { serve } from '../node-server.ts';
import { answerTurn, currentTurn } from './loop-turn.ts';

describe('the event loop’s turns', () => {
  it('one number within a turn, the next once the turn is over', async () => {
    const first = currentTurn();
    expect(currentTurn()).toBe(first);
    await Promise.resolve();
    expect(currentTurn(), 'a microtask is the same turn').toBe(first);
    await new Promise((done) => setImmediate(done));
    expect(currentTurn()).toBeGreaterThan(first);
  });

  it('the turn after an answer is counted whatever looks in it: its first poll has a number of its own', async () => {
    const immediate = () => new Promise((done) => setImmediate(done));
    const written = answerTurn();
    await immediate();
    // Nothing looked in the turn after the answer's; the one after that is numbered past it all the same.
    await immediate();
    expect(currentTurn()).toBe(written + 2);
    // Without an answer, a turn in which nothing looked is not counted.
    const looked = currentTurn();
    await immediate();
    await immediate();
    expect(currentTurn()).toBe(looked + 1);
  });

  it('still counted when a test fakes the timers', async () => {
    const realImmediate = setImmediate;
    vi.useFakeTimers();
    try {
      const first = currentTurn();
      await new Promise((done) => realImmediate(done));
      expect(currentTurn()).toBeGreaterThan(first);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('turn facts in the journal (node:http)', () => {
  const gateway = createGateway({ config: {}, log: () => {} });
  const served = serve(gateway, { port: 0, log: () => {} });
  afterAll(async () => (await served).close());
  const whoami = async (token: string) => {
    const answer = await fetch(`${(await served).url}/v1/whoami`, { headers: { 'x-agent-identity': token } });
    await answer.text();
  };

  it('the turns a request was read, its connection accepted and its answer written in', async () => {
    await whoami(gateway.mintToken('agent-verified'));
    const [entry] = gateway.journal.list({ agent: 'agent-verified' });
    // Answered at once: written in the turn it was read in, on a connection accepted before.
    expect(entry?.read_turn).toBeTypeOf('number');
    expect(entry?.written_turn).toBe(entry?.read_turn);
    expect(entry?.opened_turn).toBeLessThanOrEqual(entry?.read_turn as number);
  });

  it('an answer written after a timer has no written turn: nothing tells what was read before it', async () => {
    gateway.faults.add(
      faultSpecSchema.parse({ match: { operation: 'whoami' }, kind: 'delay', delay_ms: 5, count: 1 }),
    );
    await whoami(gateway.mintToken('agent-early'));
    const [entry] = gateway.journal.list({ agent: 'agent-early' });
    expect(entry?.read_turn).toBeTypeOf('number');
    expect(entry?.written_turn).toBeUndefined();
  });
});
