import type { Hono } from 'hono';
import { accepts } from 'hono/accepts';
import { z } from 'zod';
import type { AppEnv } from '../gateway.ts';
import {
  parseInstructionParams,
  renderInstructionHtml,
  renderInstructionMarkdown,
} from '../identity/instruction-page.ts';
import { toVerifyResponse } from '../identity/verifier.ts';
import { jsonResponse, NO_STORE } from '../json-response.ts';
import { IDENTITY_HEADER } from '../pipeline/authenticate.ts';
import { mustBe, readJsonBody } from '../pipeline/read-json-body.ts';
import type { Runtime } from '../runtime.ts';
import type { MethodTable } from './method-not-allowed.ts';

const tokenRequestSchema = z.object({
  api_key: z.string(mustBe('a string')).min(1, 'is required'),
});
const verifyRequestSchema = z.object({ token: z.string(mustBe('a string')) });

/**
 * The simulated identity provider's endpoints: token minting (API key -> token), verification (used by a
 * remote verifier) and the dynamic instruction page.
 */
export function registerIdpRoutes(app: Hono<AppEnv>, runtime: Runtime, methods: MethodTable) {
  const { idp } = runtime;

  app.post('/idp/token', async (c) => {
    const note = c.env.note;
    note.operation = 'idp.token';
    const { api_key } = await readJsonBody(
      c.req.raw,
      tokenRequestSchema,
      runtime.config.server.max_body_bytes,
    );
    const minted = idp.mintForApiKey(api_key);
    note.agent = minted.agentId;
    const body = {
      token: minted.token,
      token_type: 'agent-identity',
      header: IDENTITY_HEADER,
      agent_id: minted.agentId,
      expires_at: new Date(minted.expiresAt).toISOString(),
      expires_in: Math.round((minted.expiresAt - minted.issuedAt) / 1000),
    };
    return jsonResponse(body, { requestId: c.env.requestId, headers: NO_STORE });
  });
  methods.declare('/idp/token', ['POST']);

  app.post('/idp/verify', async (c) => {
    c.env.note.operation = 'idp.verify';
    const { token } = await readJsonBody(
      c.req.raw,
      verifyRequestSchema,
      runtime.config.server.max_body_bytes,
    );
    return jsonResponse(toVerifyResponse(idp.verify(token.trim())), {
      requestId: c.env.requestId,
      headers: NO_STORE,
    });
  });
  methods.declare('/idp/verify', ['POST']);

  app.get('/idp/auth.md', (c) => {
    c.env.note.operation = 'idp.auth';
    const params = parseInstructionParams(new URL(c.req.url).searchParams);
    const origin = new URL(c.req.url).origin;
    const type = accepts(c, {
      header: 'Accept',
      supports: ['text/markdown', 'text/html'],
      default: 'text/markdown',
    });
    c.header('vary', 'Accept');
    c.header('x-request-id', c.env.requestId);
    if (type === 'text/html') return c.html(renderInstructionHtml(params, origin, idp.ttlSeconds));
    return c.body(renderInstructionMarkdown(params, origin, idp.ttlSeconds), 200, {
      'content-type': 'text/markdown; charset=utf-8',
    });
  });
  methods.declare('/idp/auth.md', ['GET']);
}
