import { z } from 'zod';
import { TOOLS } from '../../vocabulary/tools.ts';
import { journalFingerprint } from '../hash.ts';
import type { Answer, CallContext, Handler } from '../http/context.ts';
import { NO_STORE, respondJson, respondJsonText } from '../http/respond.ts';
import type { StoredResponse } from '../idempotency.ts';
import type { Identity } from '../identity/identity-provider.ts';
import { andFinally, andThen, type MaybePromise } from '../maybe-promise.ts';
import { type Admission, admit } from '../pipeline/admit.ts';
import { authorize } from '../pipeline/authorize.ts';
import { idempotencyKey, type KeyOutcome } from '../pipeline/idempotency-key.ts';
import { identify } from '../pipeline/identify.ts';
import { injectFault } from '../pipeline/inject-fault.ts';
import { readToolBody, type ToolBody } from '../pipeline/read-tool-body.ts';
import { replayAnswer } from '../pipeline/replay-answer.ts';
import { runTool } from '../pipeline/run-tool.ts';
import type { ToolSpec } from '../pipeline/tool-spec.ts';
import { fetchRequestSchema } from '../providers/web-fetch.ts';
import { searchRequestSchema } from '../providers/web-search.ts';
import type { Runtime } from '../runtime.ts';
import type { Routes } from './route-declaration.ts';

const WHOAMI_FINGERPRINT = journalFingerprint('whoami');

/**
 * A tool call (spec section 4), as the list of its stages: identify (401), authorize (403), read body
 * (415/413/400), admit (429), idempotency key (replay/409/422), inject fault (5xx/drop), run tool, respond.
 * With a replay scenario, a recorded answer left for the agent answers once the body is read.
 * The record stage follows once the adapter has written the answer. In memory every stage answers at once
 * and so does the handler (no promise); a stage that returns a promise (a shared store, a remote verifier,
 * a slow tool) is waited for.
 */
export function toolCall<T>(runtime: Runtime, spec: ToolSpec<T>): Handler {
  const fingerprint = journalFingerprint(spec.tool);
  return (ctx) => {
    ctx.note.operation = spec.tool;
    ctx.note.request_fingerprint = fingerprint;
    return andThen(identify(runtime, ctx), (id) => {
      // A replay scenario's recorded answer, when one is left for this agent: after the body is read, so the
      // journal has what was asked (the report recognises retries by it), in place of policy, limits and tool.
      const replayed = runtime.replay?.take(id.agentId, spec.tool);
      if (replayed) return andThen(readToolBody(ctx, id, spec), () => replayAnswer(ctx, replayed));
      return andThen(authorize(runtime, ctx, id, spec), () =>
        andThen(readToolBody(ctx, id, spec), (body) =>
          andThen(admit(runtime, ctx, id, spec.tool), (admission) =>
            admitted(runtime, ctx, spec, id, body, admission),
          ),
        ),
      );
    });
  };
}

/**
 * The stages of an admitted tool call: idempotency key, inject fault, run tool, respond; then, however it
 * ends, the key is settled with the answer (stored only when it succeeded) and the in-flight slot given back.
 */
function admitted<T>(
  runtime: Runtime,
  ctx: CallContext,
  spec: ToolSpec<T>,
  id: Identity,
  body: ToolBody<T>,
  admission: Admission,
): MaybePromise<Answer> {
  let key: KeyOutcome | undefined;
  let stored: StoredResponse | undefined;
  const answer = () =>
    andThen(idempotencyKey(runtime, ctx, id, spec, body.bytes, admission.headers), (keyed) => {
      key = keyed;
      if (keyed.replay) return keyed.replay;
      return andThen(injectFault(runtime, ctx, spec.tool, id.agentId), (fault) => {
        if (fault) return fault;
        return andThen(runTool(runtime, spec, body.value), (result) => {
          stored = { status: 200, body: result, headers: NO_STORE };
          return respondJsonText(ctx, result, 200, NO_STORE, admission.headers);
        });
      });
    });
  return andFinally(answer, () => {
    key?.settle?.(stored);
    admission.release();
  });
}

/** The /v1 endpoints that are not tools: health and whoami. */
function plainEndpoints(runtime: Runtime) {
  /** GET /v1/health (spec section 4 rule 1): answered before identity, so no token, and no bad token, changes it. */
  const health: Handler = (ctx) => {
    ctx.note.operation = 'health';
    return andThen(injectFault(runtime, ctx, 'health', undefined), (fault) => {
      if (fault) return fault;
      const body = { status: 'ok', version: 'v1', time: new Date(runtime.clock.now()).toISOString() };
      return respondJson(ctx, body, 200, NO_STORE);
    });
  };

  /** GET /v1/whoami (spec section 4 rule 2): every valid token, whatever its tier; limits apply, policy does not. */
  const whoami: Handler = (ctx) => {
    ctx.note.operation = 'whoami';
    ctx.note.request_fingerprint = WHOAMI_FINGERPRINT;
    return andThen(identify(runtime, ctx), (identity) => {
      const replayed = runtime.replay?.take(identity.agentId, 'whoami');
      if (replayed) return replayAnswer(ctx, replayed);
      return andThen(admit(runtime, ctx, identity, 'whoami'), (admission) =>
        andFinally(
          () =>
            andThen(injectFault(runtime, ctx, 'whoami', identity.agentId), (fault) => {
              if (fault) return fault;
              const body = {
                agent: { id: identity.agentId, name: identity.name },
                tier: identity.tier,
                tools: runtime.policy.allowedTools(identity),
                token: {
                  issued_at: new Date(identity.issuedAt).toISOString(),
                  expires_at: new Date(identity.expiresAt).toISOString(),
                  expires_in_seconds: Math.max(
                    0,
                    Math.floor((identity.expiresAt - runtime.clock.now()) / 1000),
                  ),
                },
              };
              return respondJson(ctx, body, 200, NO_STORE, admission.headers);
            }),
          admission.release,
        ),
      );
    });
  };
  return { health, whoami };
}

// Compiled parsers: ~20x faster on a valid body; any failure goes to zod's runtime, so messages are unchanged.
const searchBody = z.compile(searchRequestSchema);
const fetchBody = z.compile(fetchRequestSchema);

/** A tool as the pipeline runs it: its path and outgoing field from the vocabulary, its body schema and provider. */
const toolSpec = <T>(
  tool: keyof typeof TOOLS,
  schema: ToolSpec<T>['schema'],
  run: ToolSpec<T>['run'],
): ToolSpec<T> => ({
  tool,
  path: TOOLS[tool].path,
  field: TOOLS[tool].field,
  schema,
  run,
});

/** The tools as the pipeline runs them: each one's path, outgoing field, body schema and provider. */
export function toolSpecs(runtime: Runtime) {
  return {
    search: toolSpec<z.output<typeof searchRequestSchema>>('web.search', searchBody, (body) =>
      runtime.search.search(body),
    ),
    fetch: toolSpec<z.output<typeof fetchRequestSchema>>('web.fetch', fetchBody, (body) =>
      runtime.fetchPage.fetch(body),
    ),
  };
}

/** The /v1 endpoints of spec section 4: the handlers of their routes in `public-route-table.ts`. */
export function registerGatewayRoutes(routes: Routes, runtime: Runtime) {
  const tools = toolSpecs(runtime);
  const { health, whoami } = plainEndpoints(runtime);
  routes.bind('health', health);
  routes.bind('whoami', whoami);
  routes.bind('webSearch', toolCall(runtime, tools.search));
  routes.bind('webFetch', toolCall(runtime, tools.fetch));
}
