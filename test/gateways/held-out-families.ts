import type { TokenSource } from '../../conformance/tokens/token-source.ts';
import type { Gateway } from '../../mock-server/gateway.ts';
import { fronted, jsonError, onNodeServer, type ProofTarget, withJson } from './proof-target.ts';

/**
 * The families a held-out round found (issue 33), each as a faulty gateway (the most common real way to
 * break the rule) and a valid one (the most unusual legal way to keep it). Each fault is a function of
 * what the gateway is sent (a request count, a header length, a status), never of timing, so the verdict
 * is the same on every seed and however loaded the machine is; a call that takes its time (the overload
 * manager's) takes it on the gateway's clock, virtual in the proofs. The Retry-After family is paced
 * (paced-gateways.ts).
 */

const PROTECTED = new Set(['/v1/whoami', '/v1/web/search', '/v1/web/fetch']);
const pathOf = (request: Request) => new URL(request.url).pathname;
const tokenOf = (request: Request) => request.headers.get('x-agent-identity')?.trim();

/** A token source that mints a fresh token whenever the suite finds the current one refused. */
function mintingSource(mint: () => string, variable: string): TokenSource & { first: string } {
  let token = mint();
  return {
    first: token,
    variable,
    current: async () => token,
    refresh: async () => {
      token = mint();
      return token;
    },
  };
}

export const HELD_OUT_FAULTY: ProofTarget[] = [
  {
    id: 'balancer-one-instance-stale-key',
    description:
      'four instances behind a round-robin balancer, one verifying tokens with a stale signing key: every 4th request refuses any token 401 invalid_identity_token',
    breaks: 'auth.valid-token-accepted',
    start: (on) => {
      let requests = 0;
      return fronted(async (request, gateway) => {
        requests += 1;
        const stale = requests % 4 === 0;
        return stale && PROTECTED.has(pathOf(request)) && tokenOf(request)
          ? jsonError(401, 'invalid_identity_token')
          : gateway.fetch(request);
      })(on);
    },
  },
  {
    id: 'rate-limit-as-200',
    description:
      'over the limit, 200 {"code":"rate_limited"} (errors inside a 200, GraphQL-style) instead of 429',
    breaks: 'ratelimit.burst-429',
    start: fronted(async (request, gateway) => {
      const response = await gateway.fetch(request);
      return response.status === 429
        ? new Response(response.body, { status: 200, headers: response.headers })
        : response;
    }),
  },
  {
    id: 'rate-limit-as-500',
    description: 'over the limit, 500 internal_error (a limiter that throws, caught by the generic handler)',
    breaks: 'ratelimit.no-5xx-under-burst',
    start: fronted(async (request, gateway) => {
      const response = await gateway.fetch(request);
      return response.status === 429 ? jsonError(500, 'internal_error') : response;
    }),
  },
  {
    id: 'long-token-400-over-2048',
    description:
      'a JWT middleware that refuses tokens over 2,048 characters with 400 invalid_request, on every endpoint',
    breaks: 'auth.invalid-token',
    start: fronted(async (request, gateway) =>
      (tokenOf(request)?.length ?? 0) > 2048 && PROTECTED.has(pathOf(request))
        ? jsonError(400, 'invalid_request')
        : gateway.fetch(request),
    ),
  },
];

export const HELD_OUT_VALID: ProofTarget[] = [
  {
    id: 'tokens-expire-after-60-uses',
    description:
      'tokens live for 60 requests (a short lifetime counted in requests, so machine speed does not matter), then 401 invalid_identity_token; the suite is given a source that mints a fresh one, as a --token-command would',
    start: (on) => {
      const uses = new Map<string, number>();
      return fronted(
        async (request, gateway) => {
          const token = tokenOf(request);
          if (token && PROTECTED.has(pathOf(request)) && gateway.idp.verify(token).ok) {
            const used = (uses.get(token) ?? 0) + 1;
            uses.set(token, used);
            if (used > 60) return jsonError(401, 'invalid_identity_token');
          }
          return gateway.fetch(request);
        },
        {},
        (gateway: Gateway) => {
          const valid = mintingSource(() => gateway.mintToken('agent-verified'), '$TOKEN');
          const denied = mintingSource(() => gateway.mintToken('agent-early'), '$DENIED_TOKEN');
          return {
            token: valid.first,
            deniedToken: denied.first,
            tokenSources: { valid, denied },
            deniedTool: 'web.search' as const,
          };
        },
      )(on);
    },
  },
  {
    id: 'rate-limit-warning-in-200',
    description:
      'served answers carry a nested advisory {"warnings":[{"code":"rate_limited","message":"3 left"}]} while the limit itself is a 429 (only a top-level code is an error code)',
    start: fronted(async (request, gateway) => {
      const response = await gateway.fetch(request);
      if (response.status !== 200 || !PROTECTED.has(pathOf(request))) return response;
      return withJson(response, (body) => {
        body.warnings = [{ code: 'rate_limited', message: 'slow down: few requests left this second' }];
      });
    }),
  },
  {
    id: 'shed-503-retry-after',
    description:
      'Envoy-style overload manager: more than 6 requests in flight are shed with 503 {"code":"overloaded"} and Retry-After: 1 (how many depends on timing; each is served on retry)',
    start: (on) => {
      let inFlight = 0;
      return fronted(async (request, gateway, clock) => {
        if (!PROTECTED.has(pathOf(request))) return gateway.fetch(request);
        if (inFlight >= 6) return jsonError(503, 'overloaded', { 'retry-after': '1' });
        inFlight += 1;
        try {
          // Each call takes a little while (an upstream), so a wave of concurrent calls piles up.
          await clock.sleep(15);
          return await gateway.fetch(request);
        } finally {
          inFlight -= 1;
        }
      })(on);
    },
  },
  {
    id: 'rare-500-cleared',
    description:
      'every 40th request fails with a plain 500 internal_error and succeeds when retried (spec §7: a 5xx is transient; treated as a 502 would be)',
    start: (on) => {
      let requests = 0;
      return fronted(async (request, gateway) => {
        requests += 1;
        return requests % 40 === 0 ? jsonError(500, 'internal_error') : gateway.fetch(request);
      })(on);
    },
  },
  {
    id: 'header-limit-1k-431',
    description:
      'a server with a 1 KiB header limit: every token from about 700 characters gets 431 before the gateway runs (health too)',
    start: onNodeServer({ maxHeaderSize: 1024 }),
  },
];
