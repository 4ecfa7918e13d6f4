import { ENDPOINTS, type EndpointId } from '../../vocabulary/endpoints.ts';
import { verifyResponseSchema } from '../identity/verifier.ts';
import { BUILT_IN_TOOLS } from '../tools/index.ts';
import * as answers from './answer-schemas.ts';
import { tokenRequestSchema, verifyRequestSchema } from './idp-routes.ts';
import { AGENT_AUTH, BODY, FAULTS, json, type RouteDeclaration, STORE } from './route-declaration.ts';
import { toolRoute } from './tool-routes.ts';

/** Where the gateway serves its OpenAPI document, without a key (it describes, it discloses nothing). */
const OPENAPI_PATH = ENDPOINTS.openapi.path;

/** Where an endpoint of the vocabulary is called (vocabulary/endpoints.ts): a route's method and path. */
const endpoint = (id: EndpointId) => ({ method: ENDPOINTS[id].method, path: ENDPOINTS[id].path });

/** The endpoints of the spec (section 4), its tools' from their definitions (`tools/`): handlers in `gateway-routes.ts`. */
export const SPEC_ROUTES: readonly RouteDeclaration[] = [
  {
    ...endpoint('health'),
    id: 'health',
    summary: 'Health check, without any identity token (spec section 4 rule 1)',
    group: 'spec',
    security: 'none',
    ok: { status: 200, description: 'The gateway is up.', schema: json('Health', answers.healthSchema) },
    errors: FAULTS,
  },
  {
    ...endpoint('whoami'),
    id: 'whoami',
    summary: 'The caller and its policy tier, for any valid token (spec section 4 rule 2)',
    group: 'spec',
    security: 'agent',
    ok: {
      status: 200,
      description: 'The identity of the token.',
      schema: json('Whoami', answers.whoamiSchema),
      rateLimited: true,
    },
    errors: [...AGENT_AUTH, 'rate_limited', ...FAULTS, ...STORE],
  },
  ...BUILT_IN_TOOLS.map(toolRoute),
];

/** The simulated identity provider (served unless tokens are verified elsewhere): handlers in `idp-routes.ts`. */
export const IDP_ROUTES: readonly RouteDeclaration[] = [
  {
    ...endpoint('idp.token'),
    id: 'idpToken',
    summary: 'Exchange an API key for a short-lived identity token',
    group: 'identity provider',
    security: 'none',
    body: json('TokenRequest', tokenRequestSchema),
    ok: {
      status: 200,
      description: 'A fresh token.',
      schema: json('TokenResponse', answers.tokenResponseSchema),
    },
    errors: [...BODY, 'invalid_api_key', 'agent_disabled', 'internal_error'],
  },
  {
    ...endpoint('idp.verify'),
    id: 'idpVerify',
    summary: 'Verify a token (what a remote verifier asks)',
    group: 'identity provider',
    security: 'none',
    body: json('VerifyRequest', verifyRequestSchema),
    ok: {
      status: 200,
      description: 'The verdict on the token.',
      schema: json('VerifyResponse', verifyResponseSchema),
    },
    errors: [...BODY, 'internal_error'],
  },
  {
    ...endpoint('idp.auth'),
    id: 'idpInstructions',
    summary: 'The token instruction page (spec section 4): Markdown, or HTML for a browser',
    group: 'identity provider',
    security: 'none',
    textQuery: [
      { name: 'app', required: true, description: 'Name of the calling application.' },
      { name: 'endpoint', required: true, description: 'The full address of the whoami endpoint.' },
      { name: 'header', required: true, description: 'The identity header, X-Agent-Identity.' },
    ],
    ok: { status: 200, description: 'How to obtain a token.', text: ['text/markdown', 'text/html'] },
    errors: ['invalid_request', 'internal_error'],
  },
];

/** The document itself: handler in `openapi/openapi-route.ts`. */
export const OPENAPI_ROUTES: readonly RouteDeclaration[] = [
  {
    method: 'GET',
    path: OPENAPI_PATH,
    id: 'openapi',
    summary: 'This document',
    group: 'reference profile',
    security: 'none',
    ok: { status: 200, description: 'The OpenAPI 3.1 document of this gateway.', text: ['application/json'] },
    errors: ['internal_error'],
  },
];
