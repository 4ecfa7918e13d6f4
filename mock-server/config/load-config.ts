import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { FIXTURES_DIR } from '../fixtures-dir.ts';
import { configSchema, type GatewayConfig, type GatewayConfigOverlay } from './schema.ts';

/** The bundled default config: the fixture agents, tiers and tools the README documents. */
export const DEFAULT_CONFIG_FILE: string = join(FIXTURES_DIR, 'config', 'default.yaml');

/** A validated config plus where it came from; corpus directories are absolute. */
export type ResolvedConfig = GatewayConfig & {
  source: string;
  corpus: GatewayConfig['corpus'] & { search: string; pages: string };
};

/** A config that failed to load: names the file, and each bad path with its reason. */
export class ConfigError extends Error {
  readonly file: string;
  readonly issues: { path: string; message: string }[];

  constructor(
    file: string,
    issues: { path: string; message: string }[],
    subject: 'config' | 'scenario' | 'fixture' | 'recording' = 'config',
  ) {
    super(
      `Invalid ${subject} ${file}:\n${issues.map((i) => `  - ${i.path || '(root)'}: ${i.message}`).join('\n')}`,
    );
    this.name = 'ConfigError';
    this.file = file;
    this.issues = issues;
  }
}

/** Renders a zod issue path the way a user would write it: `agents[2].tier`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, key) => {
    if (typeof key === 'number') return `${out}[${key}]`;
    const name = String(key);
    const plain = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
    if (!plain) return `${out}[${JSON.stringify(name)}]`;
    return out ? `${out}.${name}` : name;
  }, '');
}

/** Turns zod issues into the `{ path, message }` list used by every config-like error. */
export function describeIssues(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
}

/** The largest config or scenario file read (the bundled ones are a few kilobytes). */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;
/** Aliases a YAML file may expand (`*name`): enough for any config, far too few for an alias bomb. */
const MAX_YAML_ALIASES = 100;

/**
 * The text of a config-like file: only a regular file under MAX_CONFIG_FILE_BYTES is read. A device
 * (`/dev/zero`), a FIFO (opened without blocking, so it cannot hang the start), a directory or a larger
 * file is a ConfigError saying so.
 */
function readConfigText(file: string): string {
  const refuse = (message: string): never => {
    throw new ConfigError(file, [{ path: '', message }]);
  };
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return refuse(
      code === 'ENOENT' ? 'file not found' : `cannot be read (${code ?? (error as Error).message})`,
    );
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile())
      refuse(
        'not a regular file (a directory, device, FIFO or socket): give the path of a YAML or JSON file',
      );
    if (stat.size > MAX_CONFIG_FILE_BYTES)
      refuse(`larger than ${MAX_CONFIG_FILE_BYTES} bytes (${stat.size}): not a config or scenario file`);
    // Read at most one byte past the cap: a file that grows while read is refused too.
    const buffer = Buffer.alloc(MAX_CONFIG_FILE_BYTES + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > MAX_CONFIG_FILE_BYTES) refuse(`larger than ${MAX_CONFIG_FILE_BYTES} bytes`);
    }
    return buffer.toString('utf8', 0, length);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    return refuse(`cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads a YAML or JSON file (JSON is YAML 1.2) into a plain value. Every failure is a ConfigError naming
 * the file: syntax errors with line and column, an alias bomb (more than MAX_YAML_ALIASES expansions),
 * anything else the YAML library throws.
 */
export function readYamlFile(file: string): unknown {
  const text = readConfigText(file);
  try {
    const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
    if (doc.errors.length > 0) {
      throw new ConfigError(
        file,
        doc.errors.map((e) => ({ path: '', message: e.message.split('\n')[0] ?? e.message })),
      );
    }
    return doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const reason = (error as Error).message?.split('\n')[0] ?? String(error);
    throw new ConfigError(file, [{ path: '', message: `not valid YAML: ${reason}` }]);
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Lays `over` onto `base`: objects merge key by key, anything else (arrays included) replaces. */
export function deepMerge(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = deepMerge(base[key], value);
  return out;
}

let defaultRaw: unknown;
const defaultConfigRaw = () => {
  defaultRaw ??= readYamlFile(DEFAULT_CONFIG_FILE);
  return defaultRaw;
};

/** Whether `path` is `dir` or inside it (both absolute). */
const isInside = (path: string, dir: string) => {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/**
 * Why an extra tool's fixture may not be read, or undefined: it must be a file inside the config's folder
 * (below it at any depth), by its path and, when it exists, by where its links lead: an answer is served to
 * every agent the tool's tiers admit, so a config naming `/proc/self/environ` or `../../secrets.json` would
 * publish what the gateway's process can read.
 */
function fixtureOutside(fixture: string, baseDir: string): string | undefined {
  const outside = `must be a file inside the config's folder ${baseDir} (or below it)`;
  if (!isInside(fixture, baseDir)) return `${outside}; ${fixture} is not`;
  let real: string;
  try {
    real = realpathSync(fixture);
  } catch {
    return undefined; // missing: the tool's reader says so, naming the file
  }
  let realBase = baseDir;
  try {
    realBase = realpathSync(baseDir);
  } catch {
    // the folder as given
  }
  return isInside(real, realBase) ? undefined : `${outside}; ${fixture} leads to ${real}, which is not`;
}

/**
 * An extra tool's answer fixture is relative to the config file (to the working directory for an object),
 * and read only from inside that folder: one outside is a ConfigError, so the gateway refuses to start.
 */
function withFixturePaths(
  tools: GatewayConfig['tools'],
  baseDir: string,
  source: string,
): GatewayConfig['tools'] {
  const issues: { path: string; message: string }[] = [];
  const out = Object.fromEntries(
    Object.entries(tools).map(([name, tool]) => {
      if (!tool.answer || !('fixture' in tool.answer)) return [name, tool];
      const fixture = resolve(baseDir, tool.answer.fixture);
      const problem = fixtureOutside(fixture, baseDir);
      if (problem) issues.push({ path: `tools.${name}.answer.fixture`, message: problem });
      return [name, { ...tool, answer: { fixture } }];
    }),
  );
  if (issues.length > 0) throw new ConfigError(source, issues);
  return out;
}

function validate(raw: unknown, source: string, baseDir: string): ResolvedConfig {
  if (raw !== undefined && raw !== null && !isPlainObject(raw)) {
    throw new ConfigError(source, [
      { path: '', message: 'the config must be a mapping (YAML) or an object (JSON)' },
    ]);
  }
  const merged = deepMerge(defaultConfigRaw(), raw ?? {});
  const result = configSchema.safeParse(merged);
  if (!result.success) throw new ConfigError(source, describeIssues(result.error));
  const config = result.data;
  const defaultDir = dirname(DEFAULT_CONFIG_FILE);
  // Paths given by the user are relative to their file; the defaults are relative to the bundled config.
  const userCorpus = isPlainObject(raw) && isPlainObject(raw.corpus) ? raw.corpus : {};
  const dirFor = (key: 'search' | 'pages') =>
    typeof userCorpus[key] === 'string'
      ? resolve(baseDir, userCorpus[key] as string)
      : resolve(defaultDir, config.corpus[key] ?? `../${key}`);
  return {
    ...config,
    source,
    corpus: { ...config.corpus, search: dirFor('search'), pages: dirFor('pages') },
    tools: withFixturePaths(config.tools, baseDir, source),
  };
}

/**
 * Loads a gateway config. Sections a file or object leaves out come from the bundled default config, so a
 * file can be as small as `tools: { web.search: { enabled: false } }`.
 *
 * @example
 * loadConfig();                                  // the bundled default
 * loadConfig({ file: 'my-gateway.yaml' });       // a file laid over the default
 * loadConfig({ config: { identity: { token_ttl_seconds: 5 } } }); // an object, e.g. in a test
 * @throws ConfigError naming the file, the path and the reason.
 */
export function loadConfig(options: { file?: string; config?: GatewayConfigOverlay } = {}): ResolvedConfig {
  if (options.file) {
    const file = resolve(options.file);
    const fromFile = readYamlFile(file);
    return validate(deepMerge(fromFile, options.config), file, dirname(file));
  }
  if (options.config) return validate(options.config, '(config object)', process.cwd());
  return validate(undefined, DEFAULT_CONFIG_FILE, dirname(DEFAULT_CONFIG_FILE));
}
