import { GatewayError } from '../../errors.ts';
import { readJsonBody } from '../../http/read-body.ts';
import { type FaultSpec, faultSpecSchema } from '../../scenarios/faults.ts';
import { advanceSchema, setSchema } from '../admin-schemas.ts';
import type { AdminKit } from './admin-kit.ts';

/** Runs a clock change; a time past the clock's range is the caller's mistake (400), not a crash. */
function changeClock(field: string, change: () => void): void {
  try {
    change();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new GatewayError('invalid_request', { message: error.message, details: { field } });
  }
}

/** The virtual clock and the armed faults. */
export function registerClockAndFaultAdmin(kit: AdminKit) {
  const { route, ok, runtime, clock, maxBody, clockState } = kit;
  route('getClock', (ctx) => ok(ctx, clockState()));
  route('freezeClock', (ctx) => {
    clock.freeze();
    return ok(ctx, clockState());
  });
  route('resumeClock', (ctx) => {
    clock.resume();
    return ok(ctx, clockState());
  });
  route('resetClock', (ctx) => {
    clock.reset();
    return ok(ctx, clockState());
  });
  route('advanceClock', async (ctx) => {
    const body = await readJsonBody(ctx.request, advanceSchema, maxBody());
    // Whole milliseconds, as the clock keeps them (token times and the journal are in ms).
    const field = body.ms === undefined ? 'seconds' : 'ms';
    changeClock(field, () => clock.advance(body.ms ?? Math.round((body.seconds ?? 0) * 1000)));
    return ok(ctx, clockState());
  });
  route('setClock', async (ctx) => {
    const { time, frozen } = await readJsonBody(ctx.request, setSchema, maxBody());
    const epoch = typeof time === 'number' ? time : Date.parse(time);
    changeClock('time', () => {
      // Frozen first, then set: the clock shows exactly `time`, with no real time run in between.
      if (frozen === true) clock.freeze();
      clock.set(epoch);
      if (frozen === false) clock.resume();
    });
    return ok(ctx, clockState());
  });

  route('listFaults', (ctx) => ok(ctx, { faults: runtime.faults.list() }));
  route('armFault', async (ctx) => {
    const spec: FaultSpec = await readJsonBody(ctx.request, faultSpecSchema, maxBody());
    return ok(ctx, runtime.faults.add(spec), 201);
  });
  route('clearFaults', (ctx) => {
    runtime.faults.clear();
    return ok(ctx, { faults: [] });
  });
  route('disarmFault', (ctx, params) => {
    if (!runtime.faults.remove(params.id as string))
      throw new GatewayError('not_found', { message: `No fault "${params.id}".` });
    return ok(ctx, { faults: runtime.faults.list() });
  });
}
