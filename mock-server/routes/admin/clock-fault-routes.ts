import { GatewayError } from '../../errors.ts';
import { readJsonBody } from '../../http/read-body.ts';
import type { MaybePromise } from '../../maybe-promise.ts';
import { assertFaultTarget, type FaultSpec, faultSpecSchema, faultTargets } from '../../scenarios/faults.ts';
import type { ClockChange } from '../../store/state-port.ts';
import { advanceSchema, setSchema } from '../admin-schemas.ts';
import type { AdminKit } from './admin-kit.ts';

/** Runs a clock change; a time past the clock's range is the caller's mistake (400), not a crash. */
async function changeClock(field: string, change: () => MaybePromise<void>): Promise<void> {
  try {
    await change();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new GatewayError('invalid_request', { message: error.message, details: { field } });
  }
}

/** The virtual clock and the armed faults. */
export function registerClockAndFaultAdmin(kit: AdminKit) {
  const { route, ok, admin, runtime, maxBody, clockState } = kit;
  route('getClock', (ctx) => ok(ctx, clockState()));
  const clockRoute = (id: string, change: ClockChange) =>
    route(id, async (ctx) => {
      await admin.changeClock(change);
      return ok(ctx, clockState());
    });
  clockRoute('freezeClock', { kind: 'freeze' });
  clockRoute('resumeClock', { kind: 'resume' });
  clockRoute('resetClock', { kind: 'reset' });
  route('advanceClock', async (ctx) => {
    const body = await readJsonBody(ctx.request, advanceSchema, maxBody());
    // Whole milliseconds, as the clock keeps them (token times and the journal are in ms).
    const field = body.ms === undefined ? 'seconds' : 'ms';
    const ms = body.ms ?? Math.round((body.seconds ?? 0) * 1000);
    await changeClock(field, () => admin.changeClock({ kind: 'advance', ms }));
    return ok(ctx, clockState());
  });
  route('setClock', async (ctx) => {
    const { time, frozen } = await readJsonBody(ctx.request, setSchema, maxBody());
    const epochMs = typeof time === 'number' ? time : Date.parse(time);
    await changeClock('time', () => admin.changeClock({ kind: 'set', epochMs, frozen }));
    return ok(ctx, clockState());
  });

  route('listFaults', (ctx) => ok(ctx, { faults: runtime.faults.list() }));
  route('armFault', async (ctx) => {
    const spec: FaultSpec = await readJsonBody(ctx.request, faultSpecSchema, maxBody());
    // Checked here, for a shared store too (whose admin writes the fault to the store, not to this injector).
    assertFaultTarget(spec, faultTargets(runtime.tools));
    return ok(ctx, await admin.armFault(spec), 201);
  });
  route('clearFaults', async (ctx) => {
    await admin.clearFaults();
    return ok(ctx, { faults: [] });
  });
  route('disarmFault', async (ctx, params) => {
    if (!(await admin.disarmFault(params.id as string)))
      throw new GatewayError('not_found', { message: `No fault "${params.id}".` });
    return ok(ctx, { faults: runtime.faults.list() });
  });
}
