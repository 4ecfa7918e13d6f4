import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Call, call } from '../../test/support/call.ts';
import { TOOL_NAMES, TOOLS } from '../../vocabulary/tools.ts';
import { createClock } from '../clock.ts';
import { ERROR_CATALOGUE, ERROR_CODES } from '../errors.ts';
import { createGateway } from '../gateway.ts';
import { fetchRequestSchema } from '../providers/fetch-provider.ts';
import { searchRequestSchema } from '../providers/search-provider.ts';
import { errorSchema } from '../routes/answer-schemas.ts';
import { toolRouteId } from '../tools/tool-route-id.ts';
import { createOpenApiDocument, documentedOperations } from './document.ts';

// biome-ignore lint/suspicious/noExplicitAny: the test walks a JSON document of any shape
type Json = Record<string, any>;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const doc = createOpenApiDocument() as Json;
const METHODS = ['get', 'post', 'patch', 'delete'];

/** Every (status, code) pair the document says some response can carry, and where. */
function documentedPairs(document: Json): Map<string, string[]> {
  const pairs = new Map<string, string[]>();
  const add = (status: string, codes: string[] | undefined, where: string) => {
    for (const code of codes ?? [])
      pairs.set(`${status} ${code}`, [...(pairs.get(`${status} ${code}`) ?? []), where]);
  };
  for (const [path, item] of Object.entries(document.paths as Json))
    for (const method of METHODS) {
      const responses = (item as Json)[method]?.responses as Json | undefined;
      for (const [status, response] of Object.entries(responses ?? {}))
        add(
          status,
          response.content?.['application/json']?.schema?.allOf?.[1]?.properties?.code?.enum,
          `${method} ${path}`,
        );
    }
  for (const [name, response] of Object.entries(document.components.responses as Json))
    add(
      String(response['x-status']),
      response.content?.['application/json']?.schema?.allOf?.[1]?.properties?.code?.enum,
      name,
    );
  return pairs;
}

describe('the OpenAPI document', () => {
  it('documents every code of the error catalogue under its status, on an operation that answers it', () => {
    const pairs = documentedPairs(doc);
    const missing = ERROR_CODES.filter((code) => !pairs.has(`${ERROR_CATALOGUE[code].status} ${code}`));
    // A code added to the catalogue shows up here until an operation documents it.
    expect(missing, 'error codes no operation documents').toEqual([]);
    // And no response documents a code under another status than the catalogue's.
    for (const key of pairs.keys()) {
      const [status, code] = key.split(' ') as [string, keyof typeof ERROR_CATALOGUE];
      expect(ERROR_CATALOGUE[code]?.status, key).toBe(Number(status));
    }
  });

  it('describes the bodies with the zod schemas that validate them (no second copy)', () => {
    const schemas = doc.components.schemas as Json;
    const { $schema: _s, ...search } = z.toJSONSchema(searchRequestSchema, { io: 'input' }) as Json;
    const { $schema: _f, ...fetchBody } = z.toJSONSchema(fetchRequestSchema, { io: 'input' }) as Json;
    expect(schemas.SearchRequest).toEqual(search);
    expect(schemas.FetchRequest).toEqual(fetchBody);
    expect(schemas.SearchRequest.properties.query).toMatchObject({ minLength: 1, maxLength: 500 });
    expect(doc.paths['/v1/web/search'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/SearchRequest',
    });
    expect(doc.openapi).toMatch(/^3\.1\./);
  });

  it('passes @redocly/cli lint (recommended rules, offline) with no error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const result = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        process.execPath,
        [
          join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'),
          'lint',
          file,
          '--config',
          join(ROOT, 'redocly.yaml'),
          '--format',
          'json',
        ],
        {
          cwd: dir,
          timeout: 60_000,
          maxBuffer: 32 * 1024 * 1024,
          // No telemetry, no update check: the lint needs no network.
          env: {
            ...process.env,
            REDOCLY_TELEMETRY: 'off',
            REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
            CI: 'true',
          },
        },
        (error, stdout, stderr) =>
          resolve({
            code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
            out: stdout + stderr,
          }),
      );
    });
    const json = JSON.parse(result.out.slice(result.out.indexOf('{'), result.out.lastIndexOf('}') + 1));
    const errors = (json.problems as { severity: string; message: string }[]).filter(
      (p) => p.severity === 'error',
    );
    expect(errors).toEqual([]);
    expect(json.totals.errors).toBe(0);
    expect(result.code, result.out.slice(0, 2000)).toBe(0);
  }, 60_000);
});

describe('the document against the gateway it describes', () => {
  const KEY = 'openapi-admin-key';
  const gateway = createGateway({
    adminKey: KEY,
    clock: createClock({ frozen: true, startAt: Date.parse('2026-06-01T00:00:00Z') }),
  });
  const token = gateway.mintToken('agent-verified');
  /** An operation's method as the document spells it (lower case), a path and headers and body: status, text, type. */
  const send = async (method: string, path: string, init: Call = {}) => {
    const { status, text, headers } = await call(gateway, method.toUpperCase(), path, init);
    return { status, text, type: headers.get('content-type') ?? '' };
  };
  const agent = { 'x-agent-identity': token };
  const admin = { 'x-admin-key': KEY };

  // A valid request for every documented operation, in an order where each finds what it needs.
  const VALID: Record<
    string,
    { path?: string; body?: unknown; query?: string; headers?: Record<string, string> }
  > = {
    health: {},
    whoami: { headers: agent },
    webSearch: { headers: agent, body: { query: 'agent tool gateway' } },
    webFetch: { headers: agent, body: { url: 'https://docs.agent-gateway.example/welcome' } },
    idpToken: { body: { api_key: 'ak_verified_2b8d4f6a1c9e' } },
    idpVerify: { body: { token } },
    idpInstructions: { query: 'app=a&endpoint=http%3A%2F%2Fgw.test%2Fv1%2Fwhoami&header=X-Agent-Identity' },
    openapi: {},
    adminIndex: { headers: admin },
    listAgents: { headers: admin },
    createAgent: { headers: admin, body: { id: 'agent-new', tier: 'verified' } },
    getAgent: { headers: admin, path: '/__admin/agents/agent-new' },
    updateAgent: { headers: admin, path: '/__admin/agents/agent-new', body: { name: 'New agent' } },
    revokeTokens: { headers: admin, path: '/__admin/agents/agent-new/revoke-tokens' },
    mintToken: { headers: admin, path: '/__admin/agents/agent-new/tokens' },
    listTools: { headers: admin },
    updateTool: { headers: admin, path: '/__admin/tools/web.fetch', body: { latency_ms: 0 } },
    getLimits: { headers: admin },
    getClock: { headers: admin },
    freezeClock: { headers: admin },
    resumeClock: { headers: admin },
    resetClock: { headers: admin },
    advanceClock: { headers: admin, body: { seconds: 1 } },
    setClock: { headers: admin, body: { time: '2026-06-01T00:00:00Z' } },
    armFault: { headers: admin, body: { kind: 'status', count: 1 } },
    listFaults: { headers: admin },
    disarmFault: { headers: admin, path: '/__admin/faults/fault-1' },
    clearFaults: { headers: admin },
    getJournal: { headers: admin, query: 'limit=5' },
    exportJournal: { headers: admin, query: 'format=har&limit=5' },
    streamJournal: { headers: admin, query: 'since=0' },
    getFindings: { headers: admin },
    getClientReport: { headers: admin, query: 'agent=agent-verified' },
    clearJournal: { headers: admin },
    listScenarios: { headers: admin },
    loadScenario: { headers: admin, body: { name: 'burst-429' } },
    getScenario: { headers: admin },
    reset: { headers: admin },
  };
  // A built-in tool without a sample above is called with its vocabulary's default body.
  for (const name of TOOL_NAMES)
    VALID[toolRouteId(name)] ??= { headers: agent, body: TOOLS[name].conformanceBody };

  it('every documented operation answers its documented success, and the body parses with its schema', async () => {
    const operations = documentedOperations();
    expect(Object.keys(VALID).sort()).toEqual(operations.map((op) => op.id).sort());
    const byId = new Map(operations.map((op) => [op.id, op]));
    for (const [id, call] of Object.entries(VALID)) {
      const op = byId.get(id);
      if (!op) throw new Error(`no operation ${id}`);
      const path = `${call.path ?? op.path}${call.query ? `?${call.query}` : ''}`;
      const answer = await send(op.method, path, call);
      expect([id, answer.status], answer.text).toEqual([id, op.ok.status]);
      if (op.ok.schema) {
        const parsed = op.ok.schema.schema.safeParse(JSON.parse(answer.text));
        expect(parsed.success ? [] : [id, parsed.error.issues], answer.text.slice(0, 500)).toEqual([]);
      } else
        expect(
          op.ok.text?.some((type) => answer.type.startsWith(type)),
          `${id}: ${answer.type}`,
        ).toBe(true);
    }
  });

  it('errors the gateway answers are documented on their operation, under their status', async () => {
    const docPairs = (id: string) => {
      const op = documentedOperations().find((o) => o.id === id);
      return new Set(op?.errors.map((code) => `${ERROR_CATALOGUE[code].status} ${code}`));
    };
    const BAD: [string, string, string, { body?: unknown; headers?: Record<string, string> }][] = [
      ['whoami', 'get', '/v1/whoami', {}],
      ['whoami', 'get', '/v1/whoami', { headers: { 'x-agent-identity': 'nope' } }],
      ['webSearch', 'post', '/v1/web/search', { headers: agent, body: { query: '' } }],
      [
        'webSearch',
        'post',
        '/v1/web/search',
        { headers: { ...agent, 'content-type': 'text/plain' }, body: 'x' },
      ],
      [
        'webSearch',
        'post',
        '/v1/web/search',
        { headers: { 'x-agent-identity': gateway.mintToken('agent-early') }, body: { query: 'q' } },
      ],
      ['webFetch', 'post', '/v1/web/fetch', { headers: agent, body: { url: 'ftp://x' } }],
      ['idpToken', 'post', '/idp/token', { body: { api_key: 'ak_unknown_key_123' } }],
      ['idpVerify', 'post', '/idp/verify', { body: { token: 5 } }],
      ['idpInstructions', 'get', '/idp/auth.md', {}],
      ['listAgents', 'get', '/__admin/agents', {}],
      ['listAgents', 'get', '/__admin/agents', { headers: { 'x-admin-key': 'wrong-key-123' } }],
      ['getAgent', 'get', '/__admin/agents/nobody', { headers: admin }],
      ['createAgent', 'post', '/__admin/agents', { headers: admin, body: { id: 'agent-verified' } }],
      ['advanceClock', 'post', '/__admin/clock/advance', { headers: admin, body: { ms: 1, seconds: 1 } }],
      ['getJournal', 'get', '/__admin/journal?since=-1', { headers: admin }],
      ['streamJournal', 'get', '/__admin/journal/export?since=x', { headers: admin }],
      ['getClientReport', 'get', '/__admin/report?agent=nobody', { headers: admin }],
    ];
    for (const [id, method, path, init] of BAD) {
      const answer = await send(method, path, init);
      const body = errorSchema.parse(JSON.parse(answer.text));
      expect(
        docPairs(id).has(`${answer.status} ${body.code}`),
        `${id}: ${answer.status} ${body.code} is not documented`,
      ).toBe(true);
    }
  });

  it('is served at /openapi.json without a key, describing what this gateway serves', async () => {
    const withAdmin = await gateway.fetch(new Request('http://gw.test:9999/openapi.json'));
    expect(withAdmin.status).toBe(200);
    const served = (await withAdmin.json()) as Json;
    expect(served.servers).toEqual([{ url: 'http://gw.test:9999', description: 'The gateway' }]);
    expect(Object.keys(served.paths)).toContain('/__admin/journal');
    const plain = (await (
      await createGateway().fetch(new Request('http://gw.test/openapi.json'))
    ).json()) as Json;
    expect(Object.keys(plain.paths).filter((p) => p.startsWith('/__admin'))).toEqual([]);
    expect(Object.keys(plain.paths)).toEqual(
      expect.arrayContaining(['/v1/health', '/v1/whoami', '/idp/token']),
    );
  });
});
