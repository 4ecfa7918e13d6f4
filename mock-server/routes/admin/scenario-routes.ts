import { ConfigError } from '../../config/load-config.ts';
import { GatewayError } from '../../errors.ts';
import { readJsonBody } from '../../http/read-body.ts';
import {
  isBundledScenario,
  listScenarios,
  type Scenario,
  type ScenarioInput,
} from '../../scenarios/scenarios.ts';
import { scenarioRequestSchema } from '../admin-schemas.ts';
import type { AdminKit } from './admin-kit.ts';

/** The scenarios (bundled or inline, never a file over HTTP) and reset. */
export function registerScenarioAdmin(kit: AdminKit) {
  const { route, ok, admin, control, maxBody, clockState } = kit;
  route('listScenarios', (ctx) =>
    ok(ctx, { scenarios: listScenarios().map(({ name, description }) => ({ name, description })) }),
  );
  route('getScenario', (ctx) => {
    const current = control.scenario();
    return ok(ctx, {
      scenario: current
        ? { name: current.name, description: current.description, source: current.source }
        : null,
    });
  });
  route('loadScenario', async (ctx) => {
    const body = await readJsonBody(ctx.request, scenarioRequestSchema, maxBody());
    // Over HTTP a scenario is a bundled name or an inline object, never a path: the admin API reads no files.
    if ('name' in body && !isBundledScenario(body.name)) {
      const bundled = listScenarios().map((s) => s.name);
      throw new GatewayError('invalid_request', {
        message: `name: no bundled scenario "${body.name}" (bundled: ${bundled.join(', ')}); send other scenarios inline as {"scenario": {...}}`,
        details: { field: 'name' },
      });
    }
    let loaded: Scenario;
    try {
      loaded = control.useScenario('name' in body ? body.name : (body.scenario as ScenarioInput));
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      throw new GatewayError('invalid_request', {
        message: error.message,
        details: { field: 'scenario', issues: error.issues },
      });
    }
    // Every instance takes it over; counts and the journal start over everywhere.
    await admin.replaced();
    return ok(ctx, {
      scenario: { name: loaded.name, description: loaded.description, source: loaded.source },
      clock: clockState(),
    });
  });

  route('reset', async (ctx) => {
    control.reset();
    await admin.replaced();
    return ok(ctx, { reset: true, clock: clockState() });
  });
}
