import { timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../errors.ts';
import type { CallContext } from '../http/context.ts';
import { type AdminControl, adminKit } from './admin/admin-kit.ts';
import { registerAgentAdmin } from './admin/agent-routes.ts';
import { registerClockAndFaultAdmin } from './admin/clock-fault-routes.ts';
import { registerJournalAdmin } from './admin/journal-routes.ts';
import { registerScenarioAdmin } from './admin/scenario-routes.ts';
import type { Routes } from './route-declaration.ts';
import { adminIndex } from './route-index.ts';

export type { AdminControl } from './admin/admin-kit.ts';

/** Compares keys in constant time; different lengths are simply unequal. */
const sameKey = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** The admin key a request sends: `X-Admin-Key: KEY` or `Authorization: Bearer KEY`, nothing else. */
function adminKeyOf(ctx: CallContext): string | undefined {
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
 * table (`admin-route-table.ts`) by id, in groups by job (`admin/`). Only served when an admin key is set;
 * the core checks the key (`requireAdminKey`) before it routes any admin path.
 */
export function registerAdminRoutes(routes: Routes, control: AdminControl) {
  const kit = adminKit(routes, control);
  const endpoints = adminIndex(routes.routes);
  kit.route('adminIndex', (ctx) => kit.ok(ctx, { endpoints }));
  registerAgentAdmin(kit);
  registerClockAndFaultAdmin(kit);
  registerJournalAdmin(kit);
  registerScenarioAdmin(kit);
}
