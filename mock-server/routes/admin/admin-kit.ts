import type { ClientReport } from '../../client-report/report.ts';
import type { ClientReportOptions } from '../../client-report/types.ts';
import { GatewayError } from '../../errors.ts';
import type { CallContext, Handler } from '../../http/context.ts';
import { respondJson } from '../../http/respond.ts';
import type { Runtime } from '../../runtime.ts';
import type { Scenario, ScenarioInput } from '../../scenarios/scenarios.ts';
import type { AdminPort } from '../../store/state-port.ts';
import type { Routes } from '../route-declaration.ts';

export interface AdminControl {
  runtime: Runtime;
  adminKey: string;
  reset(): void;
  useScenario(input: string | ScenarioInput): Scenario;
  scenario(): Scenario | undefined;
  clientReport(agent: string, options?: Partial<ClientReportOptions>): Promise<ClientReport>;
  /**
   * Where every admin change is made: this process's state, or the shared store one entity at a time
   * (answered once the store has it). Handlers change nothing themselves.
   */
  admin: AdminPort;
}

/**
 * What every group of admin handlers shares: the control and runtime, `admin` (where every change is made),
 * `route` (binds a handler by its id), `ok`, the body limit, the query string,
 * and the checks and views several groups use.
 */
export function adminKit(routes: Routes, control: AdminControl) {
  const { runtime } = control;
  const { registry, clock } = runtime;
  const maxBody = () => runtime.config.server.max_body_bytes;
  const ok = (ctx: CallContext, body: unknown, status = 200) => respondJson(ctx, body, status);
  const noAgent = (id: string) =>
    new GatewayError('not_found', { message: `No agent "${id}".`, details: { agent: id } });
  const agentOr404 = (id: string) => {
    const agent = registry.get(id);
    if (!agent) throw noAgent(id);
    return agent;
  };
  const checkTier = (tier: string | undefined) => {
    if (tier !== undefined && !(tier in runtime.config.tiers)) {
      throw new GatewayError('invalid_request', {
        message: `tier: unknown tier "${tier}" (known tiers: ${Object.keys(runtime.config.tiers).join(', ')})`,
        details: { field: 'tier' },
      });
    }
  };
  /** An allowlist names tools this gateway has (built-in or declared in its config). */
  const checkAllowlist = (allowlist: readonly string[] | undefined) => {
    const unknown = allowlist?.find((tool) => !Object.hasOwn(runtime.policy.tools, tool));
    if (unknown !== undefined)
      throw new GatewayError('invalid_request', {
        message: `allowlist: unknown tool "${unknown}" (tools: ${Object.keys(runtime.policy.tools).join(', ')})`,
        details: { field: 'allowlist' },
      });
  };
  const clockState = () => ({
    now: clock.now(),
    time: new Date(clock.now()).toISOString(),
    frozen: clock.frozen,
    epoch: clock.epoch,
  });
  const { admin } = control;
  const route = (id: string, handler: Handler) => routes.bind(id, handler);
  const queryOf = (ctx: CallContext) => Object.fromEntries(new URLSearchParams(ctx.request.query));
  return {
    control,
    admin,
    runtime,
    registry,
    clock,
    maxBody,
    ok,
    agentOr404,
    noAgent,
    checkTier,
    checkAllowlist,
    clockState,
    route,
    queryOf,
  };
}

export type AdminKit = ReturnType<typeof adminKit>;
