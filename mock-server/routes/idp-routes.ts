import { z } from 'zod';
import { GatewayError } from '../errors.ts';
import type { Handler } from '../http/context.ts';
import { readJsonBody } from '../http/read-body.ts';
import { NO_STORE, respondJson, respondText } from '../http/respond.ts';
import {
  parseInstructionParams,
  renderInstructionHtml,
  renderInstructionMarkdown,
} from '../identity/instruction-page.ts';
import { createTokenThrottle } from '../identity/token-throttle.ts';
import { toVerifyResponse } from '../identity/verifier.ts';
import { IDENTITY_HEADER } from '../pipeline/identify.ts';
import type { Runtime } from '../runtime.ts';
import { mustBe } from '../validation.ts';
import type { Routes } from './route-declaration.ts';

/** Body of POST /idp/token. */
export const tokenRequestSchema = z.object({
  api_key: z.string(mustBe('a string')).min(1, 'is required'),
});
/** Body of POST /idp/verify. */
export const verifyRequestSchema = z.object({ token: z.string(mustBe('a string')) });

/**
 * The media type an `Accept` header prefers among `supports` (highest q; ties go to the earlier one, so
 * `*\/*` gets the first), or `fallback` when it names none of them.
 */
export function preferredType(accept: string | undefined, supports: readonly string[], fallback: string) {
  if (!accept) return fallback;
  let best: string | undefined;
  let bestQ = 0;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!(q > 0)) continue;
    const prefix = range.endsWith('/*') ? range.slice(0, -1) : undefined;
    for (const type of supports) {
      const matches = range === type || range === '*/*' || (prefix !== undefined && type.startsWith(prefix));
      if (matches && q > bestQ) {
        best = type;
        bestQ = q;
      }
    }
  }
  return best ?? fallback;
}

/**
 * The simulated identity provider's endpoints: token minting (API key -> token), verification (used by a
 * remote verifier) and the dynamic instruction page; their routes are in `public-route-table.ts`.
 */
export function registerIdpRoutes(routes: Routes, runtime: Runtime) {
  const { idp } = runtime;

  const throttle = createTokenThrottle({ perMinute: runtime.config.identity.token_failures_per_minute });
  let throttleLimit = runtime.config.identity.token_failures_per_minute;

  const token: Handler = async (ctx) => {
    ctx.note.operation = 'idp.token';
    // Per client address: wrong API keys are counted, and a guesser is 429 (Retry-After) before reading.
    const limit = runtime.config.identity.token_failures_per_minute;
    if (limit !== throttleLimit) {
      throttleLimit = limit;
      throttle.configure(limit);
    }
    const address = ctx.request.connection?.remoteAddress;
    const throttled = throttle.check(address);
    if (throttled) throw throttled;
    const { api_key } = await readJsonBody(
      ctx.request,
      tokenRequestSchema,
      runtime.config.server.max_body_bytes,
    );
    // Never mint with a secret the other instances may not hold (shared store in conflict: 503).
    const refusal = runtime.state.refusal();
    if (refusal) throw refusal;
    let minted: ReturnType<typeof idp.mintForApiKey>;
    try {
      minted = idp.mintForApiKey(api_key);
    } catch (error) {
      if (error instanceof GatewayError && error.code === 'invalid_api_key') throttle.failed(address);
      throw error;
    }
    ctx.note.agent = minted.agentId;
    const body = {
      token: minted.token,
      token_type: 'agent-identity',
      header: IDENTITY_HEADER,
      agent_id: minted.agentId,
      expires_at: new Date(minted.expiresAt).toISOString(),
      expires_in: Math.round((minted.expiresAt - minted.issuedAt) / 1000),
    };
    return respondJson(ctx, body, 200, NO_STORE);
  };

  const verify: Handler = async (ctx) => {
    ctx.note.operation = 'idp.verify';
    const body = await readJsonBody(ctx.request, verifyRequestSchema, runtime.config.server.max_body_bytes);
    return respondJson(ctx, toVerifyResponse(idp.verify(body.token.trim())), 200, NO_STORE);
  };

  const instructions: Handler = (ctx) => {
    ctx.note.operation = 'idp.auth';
    const params = parseInstructionParams(new URLSearchParams(ctx.request.query));
    const origin = ctx.request.origin;
    const type = preferredType(ctx.request.header('accept'), ['text/markdown', 'text/html'], 'text/markdown');
    const vary = { vary: 'Accept' };
    return type === 'text/html'
      ? respondText(
          ctx,
          renderInstructionHtml(params, origin, idp.ttlSeconds),
          'text/html; charset=UTF-8',
          vary,
        )
      : respondText(
          ctx,
          renderInstructionMarkdown(params, origin, idp.ttlSeconds),
          'text/markdown; charset=utf-8',
          vary,
        );
  };

  routes.bind('idpToken', token);
  routes.bind('idpVerify', verify);
  routes.bind('idpInstructions', instructions);
}
