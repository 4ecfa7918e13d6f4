import { fronted, jsonError, type RunningTarget, type StartOptions } from './proof-target.ts';

/*
 * A gateway whose catalogue differs from the spec's two, for `check --openapi`: no web.fetch (its path is
 * answered 404 as an unknown one) and an extra tool, web.extract, that needs a `url` (the reference gateway
 * with web.extract in its config, behind a front). Its OpenAPI document is the gateway's own description of
 * that catalogue, as an implementer would publish it: YAML, servers at /v1, the identity header as its
 * security scheme, web.extract's request schema.
 */
export const WITHOUT_FETCH_DOCUMENT = `openapi: 3.0.3
info: { title: A gateway without web.fetch, version: 1.0.0 }
servers: [{ url: /v1 }]
security: [{ identity: [] }]
components:
  securitySchemes:
    identity: { type: apiKey, in: header, name: X-Agent-Identity }
paths:
  /health:
    get: { security: [], responses: { '200': { description: up } } }
  /whoami:
    get: { responses: { '200': { description: the caller } } }
  /web/search:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema: { type: object, required: [query], properties: { query: { type: string, minLength: 1 } } }
      responses: { '200': { description: results } }
  /web/extract:
    post:
      operationId: extractPage
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [url]
              properties: { url: { type: string, format: uri }, selector: { type: string } }
      responses: { '200': { description: the page's text } }
`;

/** The reference gateway with web.extract, and web.fetch answered as a path it does not serve (404). */
export const gatewayWithoutFetch = (on?: StartOptions): Promise<RunningTarget> =>
  fronted(
    (request, gateway) =>
      new URL(request.url).pathname === '/v1/web/fetch'
        ? Promise.resolve(jsonError(404, 'not_found'))
        : gateway.fetch(request),
    { config: { tools: { 'web.extract': { path: '/v1/web/extract', tiers: ['verified'] } } } },
  )(on);
