import { z } from 'zod';
import { reportOptionsSchema } from '../client-report/report-options.ts';
import { MAX_CLOCK_MS } from '../clock.ts';
import { agentFields, toolFields } from '../config/schema.ts';
import { queryShapeOf } from '../options/option-schema.ts';

/*
 * The admin API's request bodies and query parameters, declared once: the handlers (admin-routes.ts) parse
 * with them, the route table (admin-route-table.ts) documents them in the OpenAPI document and the index.
 */

/** The admin API's reserved prefix. */
export const ADMIN_PREFIX = '/__admin';

/** Whether a path is the admin API's (the prefix itself or under it). */
export const isAdminPath = (path: string) => path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`);

// The config's own field schemas, every field optional (a patch changes what it names).
/** Body of PATCH /__admin/agents/:id. */
export const agentPatchSchema = z
  .strictObject({
    name: agentFields.name,
    tier: agentFields.tier,
    allowlist: agentFields.allowlist,
    disabled: agentFields.disabled,
  })
  .partial();
/** Body of POST /__admin/agents. */
export const agentCreateSchema = agentPatchSchema.extend({
  id: agentFields.id,
  api_key: agentFields.api_key.optional(),
});
/** Body of PATCH /__admin/tools/:tool. */
export const toolPatchSchema = z.strictObject(toolFields).partial();
/** Body of POST /__admin/clock/advance. */
export const advanceSchema = z
  .strictObject({ ms: z.number().int().min(0).optional(), seconds: z.number().min(0).optional() })
  .refine((b) => (b.ms === undefined) !== (b.seconds === undefined), {
    message: 'give exactly one of ms or seconds',
  });
/** Body of POST /__admin/clock/set. */
export const setSchema = z.strictObject({
  time: z.union([
    z.iso.datetime({ offset: true }),
    z.number().int().min(0).max(MAX_CLOCK_MS, 'must be at most 9999-12-31T23:59:59.999Z in epoch ms'),
  ]),
  /**
   * true: the clock stops at exactly `time` (set and frozen in one step: no time runs between the two);
   * false: it runs on from `time`; absent: it keeps running or stays frozen as it was.
   */
  frozen: z.boolean().optional(),
});

/** Query parameters of GET /__admin/export. */
export const exportQuery = z.strictObject({
  format: z.literal('har', { error: 'must be har' }).default('har'),
  agent: z.string().optional(),
  since: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(1_000_000).optional(),
});

/** Query parameters of GET /__admin/findings. */
export const findingsQuery = z.strictObject({
  agent: z.string().optional(),
  per_rule: z.coerce.number().int().min(1).max(1000).optional(),
});

/** Body of POST /__admin/scenario: a bundled scenario's name, or a scenario inline. */
export const scenarioRequestSchema = z.union([
  z.strictObject({ name: z.string().min(1) }),
  z.strictObject({ scenario: z.record(z.string(), z.unknown()) }),
]);

/** Query parameters of GET /__admin/journal (and its OpenAPI description). */
export const journalQuery = z.strictObject({
  agent: z.string().optional(),
  since: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(1_000_000).optional(),
});

/** Query parameters of GET /__admin/journal/export. */
export const journalExportQuery = z.strictObject({
  agent: z.string().optional(),
  since: z.coerce.number().int().min(0).optional(),
});

/** Query parameters of GET /__admin/report: the agent and the client rules' thresholds (report-options.ts). */
export const reportQuery = z.strictObject({
  agent: z.string().min(1, 'is required').describe('the agent to grade'),
  ...queryShapeOf(reportOptionsSchema),
});
