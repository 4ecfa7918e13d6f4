import { describe, expect, it } from 'vitest';
import { PACED_VALID } from './paced-gateways.ts';
import { fronted } from './proof-target.ts';
import { proveAgainst } from './prove.ts';
import { VIRTUAL_START, virtualClock } from './virtual-clock.ts';

/** A few turns of the event loop: enough for a clock that would move on its own to have moved. */
const turns = async (n = 10) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

describe('the proofs’ virtual clock', () => {
  it('wakes sleepers in the order of their wake-up times, each at its own time', async () => {
    const clock = virtualClock();
    const woke: [string, number][] = [];
    await Promise.all(
      (
        [
          ['late', 3000],
          ['early', 1000],
          ['middle', 2000],
        ] as const
      ).map(([name, ms]) => clock.sleep(ms).then(() => woke.push([name, clock.now() - VIRTUAL_START]))),
    );
    expect(woke).toEqual([
      ['early', 1000],
      ['middle', 2000],
      ['late', 3000],
    ]);
  });

  it('does not move while an exchange is in flight: a wait never ends before an answer on its way', async () => {
    const clock = virtualClock();
    let answer = (_: string) => {};
    const exchange = clock.busy(new Promise<string>((resolve) => (answer = resolve)));
    let woke = false;
    const sleeping = clock.sleep(60_000).then(() => (woke = true));
    await turns();
    expect([woke, clock.now()]).toEqual([false, VIRTUAL_START]);
    answer('200');
    expect(await exchange).toBe('200');
    await sleeping;
    expect(clock.now()).toBe(VIRTUAL_START + 60_000);
  });

  it('lets a gateway hold a request in flight on the clock: the exchange is asleep meanwhile, not busy', async () => {
    const clock = virtualClock();
    const order: string[] = [];
    const served = clock.busy(
      clock.hold(200).then(() => order.push(`served at ${clock.now() - VIRTUAL_START}`)),
    );
    const waited = clock.sleep(100).then(() => order.push(`waited at ${clock.now() - VIRTUAL_START}`));
    await Promise.all([served, waited]);
    expect(order).toEqual(['waited at 100', 'served at 200']);
  });

  it('a proof target that ignores the clock it is given is refused, never proven on real time', async () => {
    const ignoring = {
      id: 'ignores-clock',
      description: 'started on real time',
      start: () => fronted(undefined)(),
    };
    await expect(proveAgainst(ignoring, { seed: 1, numRuns: 1 })).rejects.toThrow(
      /ignores-clock did not run on the virtual clock it was given/,
    );
  });

  it('a paced gateway, whose limiter needs the shared clock, is refused a proof on real time', async () => {
    const paced = PACED_VALID[0] as (typeof PACED_VALID)[number];
    await expect(proveAgainst(paced, { seed: 1, numRuns: 1, realTime: true })).rejects.toThrow(
      /runs on a clock of its own though started on real time/,
    );
  });
});
