import { z } from 'zod';
import { journalFingerprint } from '../hash.ts';
import type { StoredResponse } from '../idempotency.ts';
import { admit } from '../pipeline/admit.ts';
import { authorize } from '../pipeline/authorize.ts';
import type { Handler, ToolSpec } from '../pipeline/context.ts';
import { idempotencyKey, type KeyOutcome } from '../pipeline/idempotency-key.ts';
import { identify } from '../pipeline/identify.ts';
import { injectFault } from '../pipeline/inject-fault.ts';
import { readToolBody } from '../pipeline/read-tool-body.ts';
import { NO_STORE, respondJson, respondJsonText } from '../pipeline/respond.ts';
import { runTool } from '../pipeline/run-tool.ts';
import { fetchRequestSchema } from '../providers/web-fetch.ts';
import { searchRequestSchema } from '../providers/web-search.ts';
import type { Runtime } from '../runtime.ts';
import type { Routes } from './route-declaration.ts';

const WHOAMI_FINGERPRINT = journalFingerprint('whoami');

/**
 * A tool call (spec section 4), as the list of its stages: identify (401), authorize (403), read body
 * (415/413/400), admit (429), idempotency key (replay/409/422), inject fault (5xx/drop), run tool, respond.
 * The record stage follows once the adapter has written the answer.
 */
export function toolCall<T>(spec: ToolSpec<T>): Handler {
  const fingerprint = journalFingerprint(spec.tool);
  return async (ctx) => {
    ctx.note.operation = spec.tool;
    ctx.note.request_fingerprint = fingerprint;
    const identity = identify(ctx);
    const id = identity instanceof Promise ? await identity : identity;
    const refused = authorize(ctx, id, spec);
    if (refused) await refused;
    const read = readToolBody(ctx, id, spec);
    const body = read instanceof Promise ? await read : read;
    const admitted = admit(ctx, id, spec.tool);
    const admission = admitted instanceof Promise ? await admitted : admitted;
    let key: KeyOutcome | undefined;
    let stored: StoredResponse | undefined;
    try {
      const keyed = idempotencyKey(ctx, id, spec, body.bytes, admission.headers);
      key = keyed instanceof Promise ? await keyed : keyed;
      if (key.replay) return key.replay;
      const struck = injectFault(ctx, spec.tool, id.agentId);
      const fault = struck instanceof Promise ? await struck : struck;
      if (fault) return fault;
      const ran = runTool(ctx, spec, body.value);
      const result = typeof ran === 'string' ? ran : await ran;
      stored = { status: 200, body: result, headers: NO_STORE };
      return respondJsonText(ctx, result, 200, NO_STORE, admission.headers);
    } finally {
      key?.settle?.(stored);
      admission.release();
    }
  };
}

/** GET /v1/health (spec section 4 rule 1): answered before identity, so no token, and no bad token, changes it. */
const health: Handler = async (ctx) => {
  ctx.note.operation = 'health';
  const struck = injectFault(ctx, 'health', undefined);
  const fault = struck instanceof Promise ? await struck : struck;
  if (fault) return fault;
  const body = { status: 'ok', version: 'v1', time: new Date(ctx.runtime.clock.now()).toISOString() };
  return respondJson(ctx, body, 200, NO_STORE);
};

/** GET /v1/whoami (spec section 4 rule 2): every valid token, whatever its tier; limits apply, policy does not. */
const whoami: Handler = async (ctx) => {
  ctx.note.operation = 'whoami';
  ctx.note.request_fingerprint = WHOAMI_FINGERPRINT;
  const identified = identify(ctx);
  const identity = identified instanceof Promise ? await identified : identified;
  const admitted = admit(ctx, identity, 'whoami');
  const admission = admitted instanceof Promise ? await admitted : admitted;
  try {
    const struck = injectFault(ctx, 'whoami', identity.agentId);
    const fault = struck instanceof Promise ? await struck : struck;
    if (fault) return fault;
    const body = {
      agent: { id: identity.agentId, name: identity.name },
      tier: identity.tier,
      tools: ctx.runtime.policy.allowedTools(identity),
      token: {
        issued_at: new Date(identity.issuedAt).toISOString(),
        expires_at: new Date(identity.expiresAt).toISOString(),
        expires_in_seconds: Math.max(0, Math.floor((identity.expiresAt - ctx.runtime.clock.now()) / 1000)),
      },
    };
    return respondJson(ctx, body, 200, NO_STORE, admission.headers);
  } finally {
    admission.release();
  }
};

// Compiled parsers: ~20x faster on a valid body; any failure goes to zod's runtime, so messages are unchanged.
const searchBody = z.compile(searchRequestSchema);
const fetchBody = z.compile(fetchRequestSchema);

/** The tools as the pipeline runs them: each one's path, outgoing field, body schema and provider. */
export function toolSpecs(runtime: Runtime) {
  const search: ToolSpec<z.output<typeof searchRequestSchema>> = {
    tool: 'web.search',
    path: '/v1/web/search',
    field: 'query',
    schema: searchBody,
    run: (body) => runtime.search.search(body),
  };
  const fetch: ToolSpec<z.output<typeof fetchRequestSchema>> = {
    tool: 'web.fetch',
    path: '/v1/web/fetch',
    field: 'url',
    schema: fetchBody,
    run: (body) => runtime.fetchPage.fetch(body),
  };
  return { search, fetch };
}

/** The /v1 endpoints of spec section 4: the handlers of their routes in `public-route-table.ts`. */
export function registerGatewayRoutes(routes: Routes, runtime: Runtime) {
  const tools = toolSpecs(runtime);
  routes.bind('health', health);
  routes.bind('whoami', whoami);
  routes.bind('webSearch', toolCall(tools.search));
  routes.bind('webFetch', toolCall(tools.fetch));
}
