import { readFileSync } from 'node:fs';
import { SPEC_TOOL_NAMES, TOOL_NAME_PATTERN, type TOOL_NAMES, TOOLS } from '../../vocabulary/tools.ts';
import { CannotRunError } from '../model/cannot-run-error.ts';

/**
 * A tool the suite calls: its name, its path on the gateway, and the JSON body it is called with. The
 * spec names web.search and web.fetch (section 4) and leaves the catalogue beyond them "not shown", so a
 * gateway declares its own: the suite checks the tools it is told of (`--tool NAME=PATH`), never one more.
 */
export interface SuiteTool {
  name: string;
  method: 'POST';
  path: string;
  /** The JSON text sent (its fields are "not shown" in the spec). */
  body: string;
  /**
   * A write-like operation (spec §7): not safe to retry blindly, so the suite sends it with an idempotency
   * key and judges that a repeat with the same key is safe (a repeat without one may be refused). Never
   * web.search or web.fetch: §4 rule 4 names them safe to retry.
   */
  writeLike?: boolean;
}

/** A tool as the user declares it: a name, and optionally its path, its body and whether it is write-like. */
export interface ToolDeclaration {
  name: string;
  path?: string;
  body?: string;
  writeLike?: boolean;
}

/** The marker of a write-like tool in a declaration: `NAME:write-like=PATH`. */
export const WRITE_LIKE_MARK = ':write-like';

const SPEC_PATH = /^\/\S*$/;

/**
 * `NAME`, `NAME=PATH` or `NAME=PATH=BODY` (the CLI's `--tool` and the Action's `tools` lines): split at the
 * first two `=`, so a body may hold more. A spec tool may leave out its path (section 4's); any other needs one.
 * `NAME:write-like` marks a write-like tool (spec §7: an idempotency key expected); a BODY of `@FILE` is read
 * from that file (relative to the working directory), so JSON needs no shell quoting.
 *
 * @example
 * parseToolDeclaration('web.extract=/v1/web/extract={"url":"https://example.com/"}');
 * // { name: 'web.extract', path: '/v1/web/extract', body: '{"url":"https://example.com/"}' }
 * parseToolDeclaration('web.snapshot:write-like=/v1/web/snapshot=@snapshot.json');
 * // { name: 'web.snapshot', path: '/v1/web/snapshot', body: <the file's text>, writeLike: true }
 */
export function parseToolDeclaration(text: string): ToolDeclaration {
  const first = text.indexOf('=');
  const head = (first < 0 ? text : text.slice(0, first)).trim();
  const writeLike = head.endsWith(WRITE_LIKE_MARK);
  const name = writeLike ? head.slice(0, -WRITE_LIKE_MARK.length) : head;
  const marked = writeLike ? { writeLike: true } : {};
  if (first < 0) return { name, ...marked };
  const rest = text.slice(first + 1);
  const second = rest.indexOf('=');
  if (second < 0) return { name, path: rest.trim(), ...marked };
  const body = rest.slice(second + 1);
  return { name, path: rest.slice(0, second).trim(), body: bodyOf(name, body), ...marked };
}

/** A declared body: inline JSON, or `@FILE` read from that file (JSON never starts with `@`). */
function bodyOf(name: string, body: string): string {
  if (!body.trimStart().startsWith('@')) return body;
  const file = body.trimStart().slice(1).trim();
  if (file === '') throw new CannotRunError(`the body of ${name} names no file: give --tool NAME=PATH=@FILE`);
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new CannotRunError(
      `the body of ${name} cannot be read from ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

/** A body the suite may send: JSON, and an object (the request's fields). */
export function checkJsonBody(label: string, body: string): void {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new CannotRunError(`${label} is not valid JSON: ${body}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CannotRunError(`${label} must be a JSON object (the request's fields): ${body}`);
}

const isSpecTool = (name: string): name is (typeof TOOL_NAMES)[number] =>
  (SPEC_TOOL_NAMES as readonly string[]).includes(name);

/**
 * The tools a run calls: those declared, in their order, or by default the spec's two at section 4's paths.
 * A spec tool's body is, in order, the declaration's, `specBodies` (`--search-body`, `--fetch-body`), then
 * the vocabulary's default; another tool's is the declaration's or `{}`. Names, paths and bodies are
 * checked: a mistake is the run's input, not the gateway's (CannotRunError, exit 2).
 */
export function suiteTools(
  declared: readonly ToolDeclaration[] | undefined,
  specBodies: Partial<Record<(typeof TOOL_NAMES)[number], string>> = {},
): SuiteTool[] {
  const list: readonly ToolDeclaration[] =
    declared && declared.length > 0 ? declared : SPEC_TOOL_NAMES.map((name) => ({ name }));
  const tools = list.map((tool): SuiteTool => {
    if (tool.name.length > 64 || !TOOL_NAME_PATTERN.test(tool.name))
      throw new CannotRunError(
        `"${tool.name}" is not a tool name: lower-case words joined by dots, e.g. web.extract (--tool NAME=PATH)`,
      );
    const spec = isSpecTool(tool.name) ? TOOLS[tool.name] : undefined;
    const path = tool.path ?? spec?.path;
    if (path === undefined)
      throw new CannotRunError(
        `give ${tool.name}'s path: --tool ${tool.name}=/v1/... (only the spec's tools have one)`,
      );
    if (!SPEC_PATH.test(path))
      throw new CannotRunError(`${tool.name}'s path must start with / and hold no space, got "${path}"`);
    const body =
      tool.body ??
      (spec
        ? (specBodies[tool.name as keyof typeof specBodies] ?? JSON.stringify(spec.conformanceBody))
        : '{}');
    checkJsonBody(`the body of ${tool.name}`, body);
    if (tool.writeLike && spec)
      throw new CannotRunError(
        `${tool.name} cannot be write-like: the spec names it safe to retry (§4 rule 4); only a tool of the gateway's own may be declared ${tool.name}${WRITE_LIKE_MARK}`,
      );
    return { name: tool.name, method: 'POST', path, body, ...(tool.writeLike && { writeLike: true }) };
  });
  for (const [i, tool] of tools.entries()) {
    const twin = tools.slice(0, i).find((t) => t.name === tool.name || t.path === tool.path);
    if (twin)
      throw new CannotRunError(
        twin.name === tool.name
          ? `${tool.name} is declared twice`
          : `${tool.name} and ${twin.name} share the path ${tool.path}`,
      );
  }
  return tools;
}
