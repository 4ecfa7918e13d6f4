import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';
import type { ClientReport } from '../client-report/report.ts';
import { reportOptionsSchema } from '../client-report/report-options.ts';
import type { ClientReportOptions } from '../client-report/types.ts';
import { ConfigError } from '../config/load-config.ts';
import { TOOL_NAMES, type ToolName } from '../config/schema.ts';
import { GatewayError } from '../errors.ts';
import type { CallContext, Handler } from '../http/context.ts';
import { readJsonBody } from '../http/read-body.ts';
import { respondJson, respondJsonText, respondText } from '../http/respond.ts';
import type { Agent } from '../identity/agent-registry.ts';
import { findingsOf } from '../journal/answer-findings.ts';
import { harTextSlices } from '../journal/har.ts';
import { journalPageJson } from '../journal/journal.ts';
import type { MaybePromise } from '../maybe-promise.ts';
import { fromQuery } from '../options/option-schema.ts';
import type { Runtime } from '../runtime.ts';
import { type FaultSpec, faultSpecSchema } from '../scenarios/faults.ts';
import {
  isBundledScenario,
  listScenarios,
  type Scenario,
  type ScenarioInput,
} from '../scenarios/scenarios.ts';
import type { AdminPort, ClockChange } from '../store/state-port.ts';
import {
  advanceSchema,
  agentCreateSchema,
  agentPatchSchema,
  exportQuery,
  findingsQuery,
  journalExportQuery,
  journalQuery,
  reportQuery,
  scenarioRequestSchema,
  setSchema,
  toolPatchSchema,
} from './admin-schemas.ts';
import type { Routes } from './route-declaration.ts';
import { adminIndex } from './route-index.ts';

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

/** Runs a clock change; a time past the clock's range is the caller's mistake (400), not a crash. */
async function changeClock(field: string, change: () => MaybePromise<void>): Promise<void> {
  try {
    await change();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new GatewayError('invalid_request', { message: error.message, details: { field } });
  }
}

/** Parses a query string with a schema; the first problem is a 400 naming the parameter. */
function parseQuery<T>(schema: z.ZodType<T>, query: Record<string, string>): T {
  const parsed = schema.safeParse(query);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = String(issue?.path[0] ?? 'query');
  throw new GatewayError('invalid_request', { message: `${field}: ${issue?.message}`, details: { field } });
}
const showAgent = (agent: Agent) => ({
  id: agent.id,
  name: agent.name,
  api_key: agent.apiKey,
  tier: agent.tier,
  allowlist: agent.allowlist,
  disabled: agent.disabled,
  token_generation: agent.tokenGeneration,
});

/** Compares keys in constant time; different lengths are simply unequal. */
const sameKey = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** The admin key a request sends: `X-Admin-Key: KEY` or `Authorization: Bearer KEY`, nothing else. */
export function adminKeyOf(ctx: CallContext): string | undefined {
  const direct = ctx.request.header('x-admin-key');
  if (direct) return direct;
  const bearer = /^Bearer[ \t]+(\S.*)$/i.exec(ctx.request.header('authorization') ?? '');
  return bearer?.[1]?.trim() || undefined;
}

/** 401 without the admin key, 403 with a wrong one (compared in constant time). */
export function requireAdminKey(ctx: CallContext, adminKey: string): void {
  const given = adminKeyOf(ctx);
  if (!given) throw new GatewayError('admin_key_required');
  if (!sameKey(given, adminKey)) throw new GatewayError('admin_key_invalid');
}

/**
 * The admin control plane under /__admin: agents (the transitions the spec leaves unshown), tools, the
 * virtual clock, faults, the journal, scenarios and reset; each handler bound to its route in the route
 * table (`admin-route-table.ts`) by id. Only served when an admin key is set; the core checks the key
 * (`requireAdminKey`) before it routes any admin path.
 */
export function registerAdminRoutes(routes: Routes, control: AdminControl) {
  const { runtime } = control;
  const { registry, clock } = runtime;
  const maxBody = () => runtime.config.server.max_body_bytes;
  const ok = (ctx: CallContext, body: unknown, status = 200) => respondJson(ctx, body, status);
  const agentOr404 = (id: string) => {
    const agent = registry.get(id);
    if (!agent) throw new GatewayError('not_found', { message: `No agent "${id}".`, details: { agent: id } });
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
  const clockState = () => ({
    now: clock.now(),
    time: new Date(clock.now()).toISOString(),
    frozen: clock.frozen,
    epoch: clock.epoch,
  });
  const { admin } = control;
  const route = (id: string, handler: Handler) => routes.bind(id, handler);
  const queryOf = (ctx: CallContext) => Object.fromEntries(new URLSearchParams(ctx.request.query));

  const endpoints = adminIndex(routes.routes);
  route('adminIndex', (ctx) => ok(ctx, { endpoints }));

  route('listAgents', (ctx) => ok(ctx, { agents: registry.list().map(showAgent) }));
  route('createAgent', async (ctx) => {
    const body = await readJsonBody(ctx.request, agentCreateSchema, maxBody());
    checkTier(body.tier);
    const apiKey = body.api_key ?? `ak_${randomBytes(12).toString('hex')}`;
    const created = await admin.createAgent({
      id: body.id,
      name: body.name ?? body.id,
      apiKey,
      tier: body.tier ?? runtime.config.default_tier,
      allowlist: body.allowlist ?? [],
      disabled: body.disabled ?? false,
    });
    if (created === 'id_taken')
      throw new GatewayError('already_exists', { message: `Agent "${body.id}" already exists.` });
    if (created === 'key_taken')
      throw new GatewayError('already_exists', { message: 'That api_key is already used.' });
    return ok(ctx, showAgent(agentOr404(body.id)), 201);
  });
  route('getAgent', (ctx, params) => ok(ctx, showAgent(agentOr404(params.id as string))));
  route('updateAgent', async (ctx, params) => {
    const id = params.id as string;
    const body = await readJsonBody(ctx.request, agentPatchSchema, maxBody());
    checkTier(body.tier);
    if (!(await admin.updateAgent(id, body))) agentOr404(id);
    return ok(ctx, showAgent(agentOr404(id)));
  });
  route('revokeTokens', async (ctx, params) => {
    const id = params.id as string;
    if (!(await admin.revokeTokens(id))) agentOr404(id);
    return ok(ctx, showAgent(agentOr404(id)));
  });
  route('mintToken', (ctx, params) => {
    // Never mint with a secret the other instances may not hold (shared store in conflict: 503).
    const refusal = runtime.state.refusal();
    if (refusal) throw refusal;
    const minted = runtime.idp.mintForAgent(agentOr404(params.id as string).id);
    return ok(
      ctx,
      { token: minted.token, agent_id: minted.agentId, expires_at: new Date(minted.expiresAt).toISOString() },
      201,
    );
  });

  route('listTools', (ctx) => ok(ctx, { tools: runtime.policy.tools }));
  route('updateTool', async (ctx, params) => {
    const tool = params.tool as ToolName;
    if (!TOOL_NAMES.includes(tool))
      throw new GatewayError('not_found', {
        message: `No tool "${tool}" (tools: ${TOOL_NAMES.join(', ')}).`,
      });
    const body = await readJsonBody(ctx.request, toolPatchSchema, maxBody());
    for (const tier of body.tiers ?? []) checkTier(tier);
    await admin.updateTool(tool, body);
    return ok(ctx, { tool, ...runtime.policy.tools[tool] });
  });

  route('getLimits', (ctx) => ok(ctx, runtime.config.rate_limits));

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

  route('getJournal', async (ctx) => {
    const query = parseQuery(journalQuery, queryOf(ctx));
    // With a shared store, the journal of every instance.
    // A page at most MAX_JOURNAL_PAGE entries long: page on with since=next_since while `more`.
    // Serialised in slices, the event loop free between them.
    const page = await runtime.state.journal.page(query);
    return respondJsonText(ctx, await journalPageJson(page));
  });
  route('streamJournal', async (ctx) => {
    const query = parseQuery(journalExportQuery, queryOf(ctx));
    // Streamed in slices (every instance's entries with a shared store; a store down is a 503 before the
    // first byte): the entries recorded up to X-Journal-Until, oldest first, one JSON entry a line.
    const exported = await runtime.state.journal.exportSlices(query);
    return {
      ...respondText(ctx, '', 'application/x-ndjson; charset=utf-8', {
        'cache-control': 'no-store',
        'x-journal-until': String(exported.until),
      }),
      // HEAD: the headers only, nothing read.
      ...(ctx.request.method === 'HEAD' ? {} : { stream: exported.slices }),
    };
  });
  route('clearJournal', async (ctx) => {
    await runtime.state.journal.clear();
    return ok(ctx, { entries: [] });
  });

  /** The journal's entries a query asks for: every instance's with a shared store. */
  const entriesOf = async (query: { agent?: string; since?: number; limit?: number }) =>
    await runtime.state.journal.list(query);
  route('exportJournal', async (ctx) => {
    const { format: _format, ...query } = parseQuery(exportQuery, queryOf(ctx));
    // Streamed in slices with backpressure, as the NDJSON export (the same bytes as one JSON answer).
    const { slices, dropped } = await runtime.state.journal.entrySlices(query);
    const har = harTextSlices(slices, ctx.request.origin, dropped);
    return { ...respondJsonText(ctx, ''), ...(ctx.request.method === 'HEAD' ? {} : { stream: har }) };
  });
  route('getFindings', async (ctx) => {
    const q = parseQuery(findingsQuery, queryOf(ctx));
    const { entries, dropped } = await entriesOf({ agent: q.agent });
    return ok(ctx, {
      judged: entries.filter((e) => e.operation !== 'other' && !e.fault).length,
      dropped,
      rules: findingsOf(entries, q.per_rule),
    });
  });

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

  route('getClientReport', async (ctx) => {
    const q = parseQuery(reportQuery, queryOf(ctx));
    return ok(ctx, await control.clientReport(q.agent, fromQuery(reportOptionsSchema, q)));
  });

  route('reset', async (ctx) => {
    control.reset();
    await admin.replaced();
    return ok(ctx, { reset: true, clock: clockState() });
  });
}
