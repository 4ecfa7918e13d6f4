import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiTools } from './openapi-tools.ts';

const dir = mkdtempSync(join(tmpdir(), 'openapi-tools-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

/** A gateway's document: servers at /v1, search, an extra extract tool, a write-like snapshot, no fetch. */
const DOCUMENT = `openapi: 3.0.3
info: { title: a gateway, version: '1' }
servers: [{ url: /v1 }]
security: [{ agent: [] }]
components:
  securitySchemes:
    agent: { type: apiKey, in: header, name: X-Agent-Identity }
  parameters:
    key: { name: Idempotency-Key, in: header, required: true, schema: { type: string } }
  schemas:
    Extract:
      type: object
      required: [url, depth]
      properties:
        url: { type: string, format: uri }
        depth: { type: integer, minimum: 2 }
        mode: { type: string, enum: [fast, full] }
paths:
  /health:
    get: { security: [], responses: { '200': { description: ok } } }
  /whoami:
    get: { responses: { '200': { description: ok } } }
  /web/search:
    post:
      requestBody:
        content:
          application/json:
            schema: { type: object, required: [query], properties: { query: { type: string } } }
      responses: { '200': { description: ok } }
  /web/extract:
    post:
      requestBody:
        content: { application/json: { schema: { $ref: '#/components/schemas/Extract' } } }
      responses: { '200': { description: ok } }
  /web/snapshot:
    post:
      parameters: [{ $ref: '#/components/parameters/key' }]
      requestBody:
        content: { application/json: { example: { url: https://example.com/page } } }
      responses: { '200': { description: ok } }
  /notes:
    post:
      x-write-like: true
      x-tool-name: notes.add
      responses: { '200': { description: ok } }
  /login:
    post: { security: [], responses: { '200': { description: ok } } }
  /items/{id}:
    post: { responses: { '200': { description: ok } } }
`;

describe('the tools of an OpenAPI document', () => {
  it('finds the spec tools by path, the extra ones by operation, write-like ones by their markings', async () => {
    const { tools, notes } = await openApiTools(file('gateway.yaml', DOCUMENT));
    expect(tools).toEqual([
      // The suite's default search body has the one required field: kept (--search-body may change it).
      { name: 'web.search', path: '/v1/web/search' },
      { name: 'web.extract', path: '/v1/web/extract', body: '{"url":"https://example.com/","depth":2}' },
      {
        name: 'web.snapshot',
        path: '/v1/web/snapshot',
        body: '{"url":"https://example.com/page"}',
        writeLike: true,
      },
      { name: 'notes.add', path: '/v1/notes', body: '{}', writeLike: true },
    ]);
    // One message names the missing spec endpoint; the unsecured /login is no tool; a parameter path is left out.
    expect(notes[0]).toMatch(
      /does not describe POST \/v1\/web\/fetch \(web\.fetch\): web\.fetch not checked \(the suite never requires a tool a gateway does not declare\)$/,
    );
    expect(notes.join('\n')).toContain('POST /v1/items/{id} is not a tool the suite can call');
    expect(notes.join('\n')).not.toContain('/login');
  });

  it('reads JSON too; without a security scheme every POST under /v1/ is a tool; an optional key is not write-like', async () => {
    const json = {
      openapi: '3.1.0',
      info: { title: 'g', version: '1' },
      paths: {
        '/v1/web/fetch': {
          post: {
            parameters: [{ name: 'Idempotency-Key', in: 'header', required: false }],
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['link'],
                    properties: { link: { type: ['string', 'null'] } },
                  },
                },
              },
            },
          },
        },
        '/v1/web/search': { post: {} },
        '/idp/token': { post: {} },
      },
    };
    const { tools, notes } = await openApiTools(file('gateway.json', JSON.stringify(json)));
    expect(tools).toEqual([
      // The default fetch body lacks the required "link": one is made from the schema.
      { name: 'web.fetch', path: '/v1/web/fetch', body: '{"link":"agent tool gateway conformance"}' },
      { name: 'web.search', path: '/v1/web/search' },
    ]);
    expect(notes[0]).toMatch(
      /does not describe GET \/v1\/health \(health\), GET \/v1\/whoami \(whoami\); health and whoami are checked all the same/,
    );
  });

  it.each([
    ['swagger.yaml', 'swagger: "2.0"\npaths: {}\n', 'is not an OpenAPI 3.0 or 3.1 document'],
    ['none.yaml', 'openapi: 3.0.0\ninfo: {}\npaths: { /v1/health: { get: {} } }\n', 'describes no tool'],
    ['broken.yaml', 'openapi: [\n', 'is not JSON or YAML'],
  ])('refuses %s as the run’s mistake', async (name, text, message) => {
    await expect(openApiTools(file(name, text))).rejects.toThrow(message);
  });

  it('names a document it cannot read', async () => {
    await expect(openApiTools(join(dir, 'absent.yaml'))).rejects.toThrow(
      /cannot read the OpenAPI document .*absent\.yaml: ENOENT/,
    );
    await expect(openApiTools('http://127.0.0.1:9/openapi.json')).rejects.toThrow(
      /cannot read the OpenAPI document http:\/\/127\.0\.0\.1:9/,
    );
  });
});
