import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { SPEC_ENDPOINTS } from '../../vocabulary/endpoints.ts';
import { IDENTITY_HEADER } from '../../vocabulary/identity-header.ts';
import { SPEC_TOOL_NAMES, type SpecToolName, TOOL_NAME_PATTERN, TOOLS } from '../../vocabulary/tools.ts';
import { IDEMPOTENCY_KEY_HEADER } from '../client/client-idempotency-key.ts';
import { CannotRunError } from '../model/cannot-run-error.ts';
import type { ToolDeclaration } from './suite-tools.ts';

/*
 * `check --openapi FILE|URL`: the tools a gateway declares, read from its OpenAPI 3.0 or 3.1 document
 * (JSON or YAML), so that a gateway whose catalogue differs from the spec's two needs no --tool flags.
 *
 * The rules, in the order they apply:
 * - Paths are taken under the first server's path when that server's URL is relative (`/v1` with paths
 *   `/web/search`); an absolute server URL is left to --base-url.
 * - A tool is a POST operation that needs the identity header (its security, or the document's, names an
 *   apiKey scheme in the header X-Agent-Identity). A document with no such scheme: every POST operation
 *   under /v1/. GET /v1/health and GET /v1/whoami are the spec's endpoints, never tools.
 * - The spec's tools are found by path (POST /v1/web/search, POST /v1/web/fetch); any other tool is named
 *   by `x-tool-name` when it gives one, else by its path after /v1/ with `/` read as `.`
 *   (/v1/web/extract: web.extract). A path with parameters ({id}) is no tool the suite can call.
 * - Write-like (spec §7): an operation with `x-write-like: true`, or one whose Idempotency-Key header
 *   parameter is required (a key it cannot do without). An optional Idempotency-Key is not enough: the
 *   reference gateway takes one on every tool, all safe to retry. The spec's tools are never write-like.
 * - The body: the JSON request body's example (`example`, the first of `examples`, the schema's example),
 *   else one made from its schema (the required fields, each its example, default, first enum value or a
 *   plain value of its type and format). A spec tool keeps the suite's default body (or --search-body,
 *   --fetch-body) when that has every required field and the document gives no example.
 * - Missing spec endpoints are named in one message: a tool the document does not describe is not checked
 *   (the suite never requires a tool a gateway does not declare); health and whoami are checked all the same.
 */

type Json = Record<string, unknown>;

/** What the document says: the tools, and one line naming what it lacks or what the suite read otherwise. */
export interface OpenApiTools {
  tools: ToolDeclaration[];
  /** One message per finding (missing spec endpoints; operations the suite cannot call). */
  notes: string[];
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Reads the document's text from a file or an http(s) URL. */
async function documentText(source: string): Promise<string> {
  if (/^https?:\/\//i.test(source)) {
    let response: Response;
    try {
      response = await fetch(source, { signal: AbortSignal.timeout(15_000) });
    } catch (error) {
      throw new CannotRunError(`cannot read the OpenAPI document ${source}: ${(error as Error).message}`);
    }
    if (!response.ok)
      throw new CannotRunError(`cannot read the OpenAPI document ${source}: HTTP ${response.status}`);
    return response.text();
  }
  try {
    return readFileSync(source, 'utf8');
  } catch (error) {
    throw new CannotRunError(
      `cannot read the OpenAPI document ${source}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

/** The parsed document, checked to be OpenAPI 3.0 or 3.1 with paths. */
function parseDocument(source: string, text: string): Json {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new CannotRunError(
      `the OpenAPI document ${source} is not JSON or YAML: ${(error as Error).message}`,
    );
  }
  if (!isObject(value) || typeof value.openapi !== 'string' || !/^3\.[01]\./.test(value.openapi))
    throw new CannotRunError(
      `${source} is not an OpenAPI 3.0 or 3.1 document (its "openapi" field: ${isObject(value) ? JSON.stringify(value.openapi) : 'none'})`,
    );
  if (!isObject(value.paths)) throw new CannotRunError(`the OpenAPI document ${source} has no paths`);
  return value;
}

/** A local `$ref` (`#/components/...`) resolved; anything else as it is. */
function resolve(doc: Json, value: unknown, depth = 0): unknown {
  if (!isObject(value) || typeof value.$ref !== 'string' || depth > 16) return value;
  if (!value.$ref.startsWith('#/')) return value;
  let at: unknown = doc;
  for (const step of value.$ref.slice(2).split('/'))
    at = isObject(at) ? at[step.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
  return resolve(doc, at, depth + 1);
}

/** The path prefix of a relative first server URL (`/v1`), else ''. */
function serverPrefix(doc: Json): string {
  const [first] = Array.isArray(doc.servers) ? doc.servers : [];
  const url = isObject(first) && typeof first.url === 'string' ? first.url : '';
  return url.startsWith('/') ? url.replace(/\/+$/, '') : '';
}

/** The names of the security schemes that are the identity header (an apiKey in X-Agent-Identity). */
function identitySchemes(doc: Json): Set<string> {
  const schemes =
    isObject(doc.components) && isObject(doc.components.securitySchemes)
      ? doc.components.securitySchemes
      : {};
  return new Set(
    Object.entries(schemes)
      .filter(([, scheme]) => {
        const s = resolve(doc, scheme);
        return (
          isObject(s) &&
          s.type === 'apiKey' &&
          s.in === 'header' &&
          typeof s.name === 'string' &&
          s.name.toLowerCase() === IDENTITY_HEADER.toLowerCase()
        );
      })
      .map(([name]) => name),
  );
}

/** Whether an operation needs the identity header (its own security, else the document's). */
function needsIdentity(doc: Json, operation: Json, schemes: Set<string>): boolean {
  const security = Array.isArray(operation.security)
    ? operation.security
    : Array.isArray(doc.security)
      ? doc.security
      : [];
  return security.some(
    (requirement) => isObject(requirement) && Object.keys(requirement).some((name) => schemes.has(name)),
  );
}

/** The operation's header parameters (its own and its path's), resolved. */
function headerParameters(doc: Json, pathItem: Json, operation: Json): Json[] {
  const all = [
    ...(Array.isArray(pathItem.parameters) ? pathItem.parameters : []),
    ...(Array.isArray(operation.parameters) ? operation.parameters : []),
  ];
  return all.map((p) => resolve(doc, p)).filter((p): p is Json => isObject(p) && p.in === 'header');
}

/** Write-like by the rules above: `x-write-like: true`, or a required Idempotency-Key header. */
function isWriteLike(doc: Json, pathItem: Json, operation: Json): boolean {
  if (operation['x-write-like'] === true) return true;
  return headerParameters(doc, pathItem, operation).some(
    (p) =>
      typeof p.name === 'string' &&
      p.name.toLowerCase() === IDEMPOTENCY_KEY_HEADER.toLowerCase() &&
      p.required === true,
  );
}

const SAMPLE_TEXT = 'agent tool gateway conformance';

/** A value a schema accepts: its example, default, first enum value, or a plain value of its type. */
export function sampleOf(doc: Json, raw: unknown, depth = 0): unknown {
  const schema = resolve(doc, raw);
  if (!isObject(schema) || depth > 8) return {};
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (Array.isArray(schema.allOf))
    return Object.assign({}, ...schema.allOf.map((part) => sampleOf(doc, part, depth + 1)).filter(isObject));
  const alternatives = Array.isArray(schema.oneOf)
    ? schema.oneOf
    : Array.isArray(schema.anyOf)
      ? schema.anyOf
      : undefined;
  if (alternatives?.length) return sampleOf(doc, alternatives[0], depth + 1);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((t) => t !== 'null') ?? (isObject(schema.properties) ? 'object' : undefined);
  switch (type) {
    case 'string':
      return sampleString(schema);
    case 'integer':
    case 'number': {
      const min =
        typeof schema.minimum === 'number'
          ? schema.minimum
          : typeof schema.exclusiveMinimum === 'number'
            ? schema.exclusiveMinimum + 1
            : 1;
      return typeof schema.maximum === 'number' ? Math.min(min, schema.maximum) : min;
    }
    case 'boolean':
      return false;
    case 'array':
      return typeof schema.minItems === 'number' && schema.minItems > 0
        ? [sampleOf(doc, schema.items, depth + 1)]
        : [];
    default: {
      const properties = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required)
        ? schema.required.filter((r) => typeof r === 'string')
        : [];
      return Object.fromEntries(required.map((name) => [name, sampleOf(doc, properties[name], depth + 1)]));
    }
  }
}

function sampleString(schema: Json): string {
  const format = typeof schema.format === 'string' ? schema.format : '';
  if (format === 'uri' || format === 'url' || format === 'iri') return 'https://example.com/';
  if (format === 'email') return 'agent@example.com';
  if (format === 'date-time') return '2026-01-01T00:00:00Z';
  if (format === 'date') return '2026-01-01';
  if (format === 'uuid') return '00000000-0000-4000-8000-000000000000';
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : SAMPLE_TEXT.length;
  return SAMPLE_TEXT.padEnd(min, ' x').slice(0, Math.max(min, Math.min(max, SAMPLE_TEXT.length)));
}

/** The JSON request body of an operation: its media type object (application/json or any +json). */
function jsonBody(doc: Json, operation: Json): Json | undefined {
  const body = resolve(doc, operation.requestBody);
  if (!isObject(body) || !isObject(body.content)) return undefined;
  const entry = Object.entries(body.content).find(([type]) =>
    /^application\/(?:[\w.+-]+\+)?json\b/i.test(type),
  );
  return entry && isObject(entry[1]) ? entry[1] : undefined;
}

/** The body to call a tool with: the document's example, else one made from its schema. */
function bodyOf(doc: Json, operation: Json, specDefault?: Json): string | undefined {
  const media = jsonBody(doc, operation);
  if (!media) return specDefault ? undefined : '{}';
  let example: unknown = media.example;
  if (example === undefined && isObject(media.examples)) {
    const [first] = Object.values(media.examples).map((e) => resolve(doc, e));
    if (isObject(first)) example = first.value;
  }
  const schema = resolve(doc, media.schema);
  if (example === undefined && isObject(schema) && schema.example !== undefined) example = schema.example;
  if (example !== undefined) return JSON.stringify(example);
  if (specDefault) {
    const required = isObject(schema) && Array.isArray(schema.required) ? schema.required : [];
    if (required.every((field) => typeof field === 'string' && Object.hasOwn(specDefault, field)))
      return undefined;
  }
  const sample = sampleOf(doc, schema);
  return JSON.stringify(isObject(sample) ? sample : {});
}

/** An extra tool's name: `x-tool-name`, else its path after /v1/ with `/` read as `.`. */
function toolNameOf(path: string, operation: Json): string | undefined {
  if (typeof operation['x-tool-name'] === 'string') return operation['x-tool-name'];
  if (path.includes('{')) return undefined;
  const name = path
    .replace(/^\/v1\//, '')
    .replaceAll('/', '.')
    .toLowerCase();
  return name.length <= 64 && TOOL_NAME_PATTERN.test(name) ? name : undefined;
}

const SPEC_TOOL_AT = new Map<string, SpecToolName>(SPEC_TOOL_NAMES.map((name) => [TOOLS[name].path, name]));

/**
 * Reads a gateway's tools from its OpenAPI document (a file or an http(s) URL, JSON or YAML) by the rules
 * above. A document that cannot be read, is not OpenAPI 3.0/3.1, or describes no tool is the run's mistake
 * (CannotRunError, exit 2).
 *
 * @example
 * const { tools, notes } = await openApiTools('http://127.0.0.1:8787/openapi.json');
 * // tools: [{ name: 'web.search', path: '/v1/web/search' }, { name: 'web.extract', path: '/v1/web/extract', body: '{}' }]
 */
export async function openApiTools(source: string): Promise<OpenApiTools> {
  const doc = parseDocument(source, await documentText(source));
  const prefix = serverPrefix(doc);
  const schemes = identitySchemes(doc);
  const tools: ToolDeclaration[] = [];
  const notes: string[] = [];
  const described = new Set<string>();
  for (const [rawPath, rawItem] of Object.entries(doc.paths as Json)) {
    const pathItem = resolve(doc, rawItem);
    if (!isObject(pathItem)) continue;
    const path = `${prefix}${rawPath}`;
    for (const [method, rawOperation] of Object.entries(pathItem)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method) || !isObject(rawOperation)) continue;
      described.add(`${method.toUpperCase()} ${path}`);
      if (method !== 'post') continue;
      const operation = rawOperation;
      const isTool = schemes.size > 0 ? needsIdentity(doc, operation, schemes) : path.startsWith('/v1/');
      if (!isTool) continue;
      const spec = SPEC_TOOL_AT.get(path);
      if (spec) {
        if (isWriteLike(doc, pathItem, operation))
          notes.push(
            `the OpenAPI document marks ${spec} write-like: the spec names it safe to retry (§4 rule 4), and the suite checks it so`,
          );
        const body = bodyOf(doc, operation, TOOLS[spec].conformanceBody as Json);
        tools.push({ name: spec, path, ...(body !== undefined && { body }) });
        continue;
      }
      if (path === SPEC_ENDPOINTS.health.path || path === SPEC_ENDPOINTS.whoami.path) continue;
      const name = toolNameOf(path, operation);
      if (!name) {
        notes.push(
          `POST ${path} is not a tool the suite can call (a path parameter, or no name: give it x-tool-name), left out`,
        );
        continue;
      }
      const writeLike = isWriteLike(doc, pathItem, operation);
      tools.push({ name, path, body: bodyOf(doc, operation) ?? '{}', ...(writeLike && { writeLike }) });
    }
  }
  const missing = Object.entries(SPEC_ENDPOINTS)
    .filter(([, e]) => !described.has(`${e.method} ${e.path}`))
    .map(([id, e]) => `${e.method} ${e.path} (${id})`);
  if (missing.length > 0) {
    const missingTools = SPEC_TOOL_NAMES.filter((name) => !tools.some((t) => t.name === name));
    notes.unshift(
      `the OpenAPI document ${source} does not describe ${missing.join(', ')}${missingTools.length > 0 ? `: ${missingTools.join(' and ')} not checked (the suite never requires a tool a gateway does not declare)` : ''}${missing.some((m) => /\((health|whoami)\)/.test(m)) ? '; health and whoami are checked all the same (every gateway serves them, spec §4)' : ''}`,
    );
  }
  if (tools.length === 0)
    throw new CannotRunError(
      `the OpenAPI document ${source} describes no tool (a POST operation${schemes.size > 0 ? ` secured by the ${IDENTITY_HEADER} header` : ' under /v1/'})`,
    );
  return { tools, notes };
}
