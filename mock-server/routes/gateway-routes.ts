import { setTimeout as sleep } from 'node:timers/promises';
import type { Context, Hono } from 'hono';
import { type ZodType, z } from 'zod';
import type { ToolName } from '../config/schema.ts';
import type { AppEnv } from '../gateway.ts';
import { journalFingerprint } from '../hash.ts';
import { parseIdempotencyKey, requestFingerprint, type StoredResponse } from '../idempotency.ts';
import type { Identity } from '../identity/identity-provider.ts';
import { jsonResponse, jsonTextResponse, NO_STORE } from '../json-response.ts';
import { admit } from '../pipeline/admit.ts';
import { IDENTITY_HEADER, identify } from '../pipeline/authenticate.ts';
import { injectFault } from '../pipeline/inject-fault.ts';
import { parseJsonBody, readBody } from '../pipeline/read-json-body.ts';
import type { Runtime } from '../runtime.ts';
import { fetchRequestSchema } from '../tools/web-fetch.ts';
import { searchRequestSchema } from '../tools/web-search.ts';
import type { MethodTable } from './method-not-allowed.ts';

const WHOAMI_FINGERPRINT = journalFingerprint('whoami');
// Compiled parsers: ~20x faster on a valid body; any failure goes to zod's runtime, so messages are unchanged.
const searchBody = z.compile(searchRequestSchema);
const fetchBody = z.compile(fetchRequestSchema);

/** Records the query or URL in the journal note with secrets redacted, and which kinds were found. */
function noteOutgoingText(
  runtime: Runtime,
  c: Context<AppEnv>,
  identity: Identity,
  field: 'query' | 'url',
  text: string,
) {
  const note = c.env.note;
  const { redacted, kinds } = runtime.scanSecrets(text, {
    token: c.req.raw.headers.get(IDENTITY_HEADER)?.trim(),
    agentId: identity.agentId,
  });
  note[field] = redacted;
  if (kinds.length > 0) note.secrets = kinds;
}

/**
 * The /v1 endpoints of spec section 4. Tool calls go through the stages in order: route (404/405) ->
 * identity (401) -> policy (403) -> body (413/415/400) -> limits (429) -> idempotency (replay/409/422) ->
 * fault -> tool. whoami skips policy and body; health is answered before identity, so no token (and no
 * bad token) changes it.
 */
export function registerGatewayRoutes(app: Hono<AppEnv>, runtime: Runtime, methods: MethodTable) {
  app.get('/v1/health', async (c) => {
    const note = c.env.note;
    note.operation = 'health';
    const dropped = await injectFault(runtime, 'health', undefined, note);
    if (dropped) return dropped;
    const body = { status: 'ok', version: 'v1', time: new Date(runtime.clock.now()).toISOString() };
    return jsonResponse(body, { requestId: c.env.requestId, headers: NO_STORE });
  });
  methods.declare('/v1/health', ['GET']);

  app.get('/v1/whoami', async (c) => {
    const note = c.env.note;
    note.operation = 'whoami';
    note.request_fingerprint = WHOAMI_FINGERPRINT;
    const identified = identify(c.req.raw, runtime.verifier, note);
    const identity = identified instanceof Promise ? await identified : identified;
    const admission = admit(runtime, identity, 'whoami', note);
    try {
      const dropped = await injectFault(runtime, 'whoami', identity.agentId, note);
      if (dropped) return dropped;
      const body = {
        agent: { id: identity.agentId, name: identity.name },
        tier: identity.tier,
        tools: runtime.policy.allowedTools(identity),
        token: {
          issued_at: new Date(identity.issuedAt).toISOString(),
          expires_at: new Date(identity.expiresAt).toISOString(),
          expires_in_seconds: Math.max(0, Math.floor((identity.expiresAt - runtime.clock.now()) / 1000)),
        },
      };
      return jsonResponse(body, {
        requestId: c.env.requestId,
        headers: { ...NO_STORE, ...admission.headers },
      });
    } finally {
      admission.release();
    }
  });
  methods.declare('/v1/whoami', ['GET']);

  /**
   * What a refused call tried to send (its query or URL), for the journal: an agent that leaks a secret
   * into a call it may not make, or a body that fails validation, leaked it all the same (client rule 2).
   */
  const noteRefusedCall = async (
    c: Context<AppEnv>,
    identity: Identity,
    field: 'query' | 'url',
    bytes?: Uint8Array,
  ) => {
    try {
      const raw = bytes ?? (await readBody(c.req.raw, runtime.config.server.max_body_bytes));
      const value = (JSON.parse(Buffer.from(raw).toString('utf8')) as Record<string, unknown>)?.[field];
      if (typeof value === 'string') noteOutgoingText(runtime, c, identity, field, value);
    } catch {
      // Unreadable or not JSON: nothing was sent that the journal could show.
    }
  };

  const toolRoute = <T>(
    tool: ToolName,
    path: string,
    schema: ZodType<T>,
    field: 'query' | 'url',
    run: (body: T) => unknown,
  ) => {
    app.post(path, async (c) => {
      const note = c.env.note;
      const requestId = c.env.requestId;
      note.operation = tool;
      note.request_fingerprint = journalFingerprint(tool);
      const identified = identify(c.req.raw, runtime.verifier, note);
      const identity = identified instanceof Promise ? await identified : identified;
      try {
        runtime.policy.authorize(identity, tool);
      } catch (error) {
        await noteRefusedCall(c, identity, field);
        throw error;
      }
      const bytes = await readBody(c.req.raw, runtime.config.server.max_body_bytes);
      let body: T;
      try {
        body = parseJsonBody(bytes, schema);
      } catch (error) {
        await noteRefusedCall(c, identity, field, bytes);
        throw error;
      }
      note.request_fingerprint = journalFingerprint(tool, bytes);
      noteOutgoingText(runtime, c, identity, field, (body as Record<typeof field, string>)[field]);
      const admission = admit(runtime, identity, tool, note);
      const headers = { ...NO_STORE, ...admission.headers };
      let idempotency: { key: string; request: string } | undefined;
      let stored: StoredResponse | undefined;
      try {
        const keyHeader = c.req.raw.headers.get('idempotency-key');
        if (keyHeader !== null) {
          const key = parseIdempotencyKey(keyHeader);
          const request = requestFingerprint('POST', path, bytes);
          // Throws 409/422 without holding the key: the original request's entry must survive a conflict.
          const outcome = runtime.idempotency.begin(identity.agentId, key, request, runtime.clock.now());
          if (outcome.kind === 'new') idempotency = { key, request };
          else {
            note.idempotency = 'replayed';
            const replay = outcome.response;
            return jsonTextResponse(replay.body, {
              status: replay.status,
              requestId,
              headers: { ...replay.headers, ...headers, 'idempotent-replayed': 'true' },
            });
          }
        }
        const dropped = await injectFault(runtime, tool, identity.agentId, note);
        if (dropped) return dropped;
        const latency = runtime.policy.tools[tool].latency_ms;
        if (latency > 0) await sleep(latency);
        const result = run(body);
        // A synchronous provider (the fixtures) answers without a promise: no extra tick.
        const text = JSON.stringify(result instanceof Promise ? await result : result);
        stored = { status: 200, body: text, headers: NO_STORE };
        return jsonTextResponse(text, { requestId, headers });
      } finally {
        if (idempotency) {
          runtime.idempotency.finish(
            identity.agentId,
            idempotency.key,
            idempotency.request,
            runtime.clock.now(),
            stored,
          );
          if (stored) note.idempotency = 'stored';
        }
        admission.release();
      }
    });
    methods.declare(path, ['POST']);
  };

  toolRoute('web.search', '/v1/web/search', searchBody, 'query', (body) => runtime.search.search(body));
  toolRoute('web.fetch', '/v1/web/fetch', fetchBody, 'url', (body) => runtime.fetchPage.fetch(body));
}
