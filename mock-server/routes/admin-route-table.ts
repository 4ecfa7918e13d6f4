import type { ErrorCode } from '../errors.ts';
import { faultSpecSchema } from '../scenarios/faults.ts';
import * as schemas from './admin-schemas.ts';
import * as answers from './answer-schemas.ts';
import { ADMIN, BODY, json, type NamedSchema, type RouteDeclaration } from './route-declaration.ts';

/** Where the dashboard is served: the page, and its files beside it. */
const DASHBOARD_PATH = `${schemas.ADMIN_PREFIX}/ui`;

interface AdminExtras {
  body?: NamedSchema;
  query?: RouteDeclaration['query'];
  /** Error codes beyond the admin key's and the store's (and the body's, with a body). */
  errors?: ErrorCode[];
  status?: number;
  /** The success answer's description (default: the summary). */
  answer?: string;
}

/** An admin route: under /__admin, behind the admin key. */
const admin = (
  method: RouteDeclaration['method'],
  path: string,
  id: string,
  summary: string,
  /** The success answer's JSON schema, or the media types of a text answer. */
  ok: NamedSchema | { text: string[] },
  extras: AdminExtras = {},
): RouteDeclaration => ({
  method,
  path: `${schemas.ADMIN_PREFIX}${path}`,
  id,
  summary,
  group: 'admin',
  security: 'admin',
  ...(extras.body && { body: extras.body }),
  ...(extras.query && { query: extras.query }),
  ok: {
    status: extras.status ?? 200,
    description: extras.answer ?? summary,
    ...('text' in ok ? { text: ok.text } : { schema: ok }),
  },
  errors: [...ADMIN, ...(extras.body ? BODY : []), ...(extras.errors ?? [])],
});

const AGENT = json('Agent', answers.agentViewSchema);
const CLOCK = json('Clock', answers.clockSchema);
const FAULTS_LIST = json('Faults', answers.faultsSchema);
const NOT_FOUND: ErrorCode[] = ['not_found'];

/** The admin API under /__admin (served with an admin key): handlers in `admin-routes.ts`. */
export const ADMIN_ROUTES: readonly RouteDeclaration[] = [
  admin(
    'GET',
    '',
    'adminIndex',
    'List the admin endpoints',
    json('EndpointList', answers.endpointListSchema),
  ),
  admin('GET', '/agents', 'listAgents', 'Agents, with their API keys', json('Agents', answers.agentsSchema)),
  admin('POST', '/agents', 'createAgent', 'Create an agent (tier defaults to default_tier)', AGENT, {
    body: json('AgentCreate', schemas.agentCreateSchema),
    errors: ['already_exists'],
    status: 201,
  }),
  admin('GET', '/agents/:id', 'getAgent', 'One agent', AGENT, { errors: NOT_FOUND }),
  admin('PATCH', '/agents/:id', 'updateAgent', 'Change an agent, effective at once for its tokens', AGENT, {
    body: json('AgentPatch', schemas.agentPatchSchema),
    errors: NOT_FOUND,
  }),
  admin('POST', '/agents/:id/revoke-tokens', 'revokeTokens', 'Revoke every token the agent holds', AGENT, {
    errors: NOT_FOUND,
  }),
  admin(
    'POST',
    '/agents/:id/tokens',
    'mintToken',
    'Mint a token for the agent',
    json('MintedToken', answers.mintedTokenSchema),
    { errors: NOT_FOUND, status: 201 },
  ),
  admin('GET', '/tools', 'listTools', 'Tool settings', json('Tools', answers.toolsSchema)),
  admin(
    'PATCH',
    '/tools/:tool',
    'updateTool',
    'Change a tool',
    json('ToolPatched', answers.toolPatchedSchema),
    {
      body: json('ToolPatch', schemas.toolPatchSchema),
      errors: NOT_FOUND,
    },
  ),
  admin('GET', '/limits', 'getLimits', 'The rate limits in force', json('RateLimits', answers.limitsSchema)),
  admin('GET', '/clock', 'getClock', 'The virtual clock', CLOCK),
  admin('POST', '/clock/freeze', 'freezeClock', 'Freeze the clock', CLOCK),
  admin('POST', '/clock/resume', 'resumeClock', 'Let the clock run again', CLOCK),
  admin('POST', '/clock/reset', 'resetClock', 'Back to real time', CLOCK),
  admin('POST', '/clock/advance', 'advanceClock', 'Move the clock forward ({ms} or {seconds})', CLOCK, {
    body: json('ClockAdvance', schemas.advanceSchema),
  }),
  admin('POST', '/clock/set', 'setClock', 'Set the clock (ISO 8601 or epoch ms)', CLOCK, {
    body: json('ClockSet', schemas.setSchema),
  }),
  admin('GET', '/faults', 'listFaults', 'Armed faults', FAULTS_LIST),
  admin('POST', '/faults', 'armFault', 'Arm a fault', json('Fault', answers.faultSchema), {
    body: json('FaultSpec', faultSpecSchema),
    status: 201,
  }),
  admin('DELETE', '/faults', 'clearFaults', 'Disarm every fault', FAULTS_LIST),
  admin('DELETE', '/faults/:id', 'disarmFault', 'Disarm one fault', FAULTS_LIST, { errors: NOT_FOUND }),
  admin(
    'GET',
    '/journal',
    'getJournal',
    'Recent requests (agent traffic; admin calls are not journaled)',
    json('Journal', answers.journalSchema),
    { query: schemas.journalQuery, errors: ['invalid_request'], answer: 'Journal entries, oldest first.' },
  ),
  admin(
    'GET',
    '/journal/export',
    'streamJournal',
    'Every journal entry, streamed as NDJSON (the entries up to X-Journal-Until, oldest first)',
    { text: ['application/x-ndjson'] },
    {
      query: schemas.journalExportQuery,
      errors: ['invalid_request'],
      answer: 'One JSON journal entry a line.',
    },
  ),
  admin(
    'DELETE',
    '/journal',
    'clearJournal',
    'Empty the journal',
    json('EmptyJournal', answers.emptyJournalSchema),
  ),
  admin(
    'GET',
    '/export',
    'exportJournal',
    'The journal as a HAR 1.2 file (headers and bodies as the journal keeps them, redacted)',
    json('Har', answers.harSchema),
    { query: schemas.exportQuery, errors: ['invalid_request'], answer: 'A HAR 1.2 log.' },
  ),
  admin(
    'GET',
    '/findings',
    'getFindings',
    "Spec rules the journaled answers broke, per rule with the exchanges (proxy mode: the target's)",
    json('Findings', answers.findingsSchema),
    { query: schemas.findingsQuery, errors: ['invalid_request'], answer: 'Findings per rule.' },
  ),
  admin(
    'GET',
    '/scenarios',
    'listScenarios',
    'Bundled scenarios',
    json('Scenarios', answers.scenariosSchema),
  ),
  admin(
    'GET',
    '/scenario',
    'getScenario',
    'The scenario in force',
    json('ScenarioInForce', answers.scenarioSchema),
  ),
  admin(
    'POST',
    '/scenario',
    'loadScenario',
    'Load a bundled scenario by name, or one inline (resets first)',
    json('ScenarioLoaded', answers.scenarioLoadedSchema),
    { body: json('ScenarioRequest', schemas.scenarioRequestSchema) },
  ),
  admin(
    'POST',
    '/reset',
    'reset',
    'Back to how the gateway started (its config and --scenario); faults and journal cleared',
    json('Reset', answers.resetSchema),
  ),
  admin(
    'GET',
    '/report',
    'getClientReport',
    "An agent's client behaviour report (the spec's client safety rules)",
    json('ClientReport', answers.clientReportSchema),
    { query: schemas.reportQuery, errors: ['invalid_request', 'not_found'], answer: 'The report.' },
  ),
];

const DASHBOARD_WHY = "a browser's page and its files, not an API: a client of the documented admin API";

/** A file of the dashboard: served without the admin key (the page asks for it), never in the document. */
const dashboardFile = (
  path: string,
  id: string,
  summary: string,
  type: string,
  unlisted: boolean,
): RouteDeclaration => ({
  method: 'GET',
  path: `${DASHBOARD_PATH}${path}`,
  id,
  summary,
  group: 'dashboard',
  security: 'none',
  ok: { status: 200, description: summary, text: [type] },
  errors: ['internal_error'],
  undocumented: DASHBOARD_WHY,
  ...(unlisted && { unlisted }),
});

/** The dashboard at /__admin/ui (served with the admin API): handler in `dashboard/dashboard-routes.ts`. */
export const DASHBOARD_ROUTES: readonly RouteDeclaration[] = [
  dashboardFile(
    '',
    'dashboard',
    'The dashboard (the page loads without the key and asks for it)',
    'text/html',
    false,
  ),
  dashboardFile('/', 'dashboardSlash', 'The dashboard, with a trailing slash', 'text/html', true),
  dashboardFile('/dashboard.js', 'dashboardScript', "The dashboard's script", 'text/javascript', true),
  dashboardFile('/dashboard.css', 'dashboardStyle', "The dashboard's stylesheet", 'text/css', true),
];
