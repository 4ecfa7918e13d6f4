/**
 * The consumer tests' tools (test/consumers/consumers.ts): commands run in scratch projects with a clean
 * environment and a time bound, npm installs that say when the registry is the trouble, and Node binaries
 * of other majors from the npm packages that ship them.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';

export const CACHE = join(tmpdir(), 'agent-gateway-consumers-cache');
/** The npm package that ships a Node binary of a major version for this machine. */
export const nodePackage = (major: number) => `node-${process.platform}-${process.arch}@${major}`;
export const MINUTE = 60_000;

export const progress = (line: string) => process.stderr.write(`[consumers] ${line}\n`);

export interface Result {
  code: number | null;
  output: string;
}

/**
 * The environment of a command run in a scratch project: `npm run` exports the repository's own npm and
 * package settings (npm_config_local_prefix, npm_package_*), which must not reach an npm run elsewhere.
 * The cache, registry and user config stay, so the scratch installs use the same ones.
 */
export function cleanEnv(nodeDir?: string): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig']);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('npm_') && !keep.has(key)) continue;
    if (key === 'NODE_OPTIONS' || key.startsWith('VITEST') || key === 'NODE_ENV') continue;
    env[key] = value;
  }
  env.NO_COLOR = '1';
  env.CI = 'true';
  if (nodeDir) env.PATH = `${nodeDir}${delimiter}${env.PATH ?? ''}`;
  return env;
}

/** Runs a command to completion (killed, with its children, after timeoutMs); output interleaved. */
export function run(
  command: string,
  args: string[],
  options: { cwd: string; nodeDir?: string | undefined; env?: Record<string, string>; timeoutMs: number },
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...cleanEnv(options.nodeDir), ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
      output += `\n[consumers] killed after ${options.timeoutMs / 1000} s`;
    }, options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Ends a command started here and the processes it started (npx runs the bin in a child). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

export function expectSuccess(what: string, result: Result) {
  assert.equal(result.code, 0, `${what} exited with ${result.code}:\n${result.output}`);
}

export const NETWORK_TROUBLE =
  /E(NOTFOUND|AI_AGAIN|CONNREFUSED|CONNRESET|TIMEDOUT|NETUNREACH|HOSTUNREACH)|socket hang up|network|request to \S+ failed/i;

/**
 * npm install as a user runs it (no lockfile, no --prefer-offline: today's latest version in each range), by
 * the npm on `nodeDir`'s Node when given; its output (npm's warnings among it). A failure says whether the
 * registry is the problem rather than the package.
 */
export async function npmInstall(
  cwd: string,
  specs: string[],
  label: string,
  options: { nodeDir?: string | undefined } = {},
): Promise<string> {
  const result = await run(
    'npm',
    [
      'install',
      '--save-dev',
      '--no-audit',
      '--no-fund',
      '--fetch-retries=1',
      '--fetch-timeout=60000',
      ...specs,
    ],
    { cwd, nodeDir: options.nodeDir, timeoutMs: 5 * MINUTE },
  );
  if (result.code === 0) return result.output;
  if (NETWORK_TROUBLE.test(result.output)) {
    throw new Error(
      `The consumer tests install ${label} from the npm registry, and the registry could not be reached. Run them again with access to the registry (npm ping says whether it is reachable).\n${result.output.slice(-2000)}`,
    );
  }
  throw new Error(`npm install ${specs.join(' ')} failed in ${cwd}:\n${result.output.slice(-4000)}`);
}

/** Every installed package of a scratch project and its version, by its folder (`node_modules/a/node_modules/b`). */
function installedByFolder(dir: string): Map<string, { name: string; version: string }> {
  const lock = join(dir, 'node_modules', '.package-lock.json');
  const found = new Map<string, { name: string; version: string }>();
  if (!existsSync(lock)) return found;
  const { packages } = JSON.parse(readFileSync(lock, 'utf8')) as {
    packages: Record<string, { version?: string; name?: string }>;
  };
  for (const [folder, entry] of Object.entries(packages)) {
    if (!entry.version) continue;
    const name = entry.name ?? folder.slice(folder.lastIndexOf('node_modules/') + 'node_modules/'.length);
    found.set(folder, { name, version: entry.version });
  }
  return found;
}

/** The version of each package installed at the top of a scratch project's node_modules. */
export function installedVersions(dir: string): Map<string, string> {
  const versions = new Map<string, string>();
  for (const [folder, { name, version }] of installedByFolder(dir))
    if (folder === `node_modules/${name}`) versions.set(name, version);
  return versions;
}

/**
 * The installed packages a failing command's output points into (a type error in a dependency's .d.ts, a
 * stack frame in its code), each as name@version: what an upstream release that broke the build is. Empty
 * when the output names no file under node_modules.
 */
export function upstreamNamed(output: string, dir: string): string {
  const installed = installedByFolder(dir);
  const named = new Map<string, string>();
  for (const m of output.matchAll(/(?:node_modules\/(?:@[^/\s'"():]+\/)?[^/\s'"():]+\/?)+/g)) {
    const folder = m[0].replace(/\/$/, '');
    const entry = installed.get(folder);
    if (entry) named.set(folder, `${entry.name}@${entry.version}`);
  }
  if (named.size === 0) return '';
  return ` (the output points into installed packages: ${[...named].map(([folder, id]) => `${id} in ${folder}`).join(', ')}; an upstream release is suspect when the package is not this one)`;
}

/** A Node binary of a major version from the npm package that ships it, kept between runs. */
export async function nodeBinDir(major: number): Promise<string> {
  const spec = nodePackage(major);
  const dir = join(CACHE, spec.replace('@', '-'));
  const bin = join(dir, 'node_modules', spec.split('@')[0] as string, 'bin', 'node');
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
    progress(`installing ${spec} into ${dir} (once; kept for the next runs)`);
    await npmInstall(dir, ['--no-save', spec], `a Node ${major} binary (${spec})`);
  }
  const version = await run(bin, ['--version'], { cwd: dir, timeoutMs: MINUTE });
  expectSuccess(`${bin} --version`, version);
  assert.match(version.output.trim(), new RegExp(`^v${major}\\.`), `${bin} is not Node ${major}`);
  return dirname(bin);
}

/** The installed major of a package in a scratch project. */
export function installedMajor(dir: string, name: string): number {
  const manifest = JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as {
    version: string;
  };
  return Number(manifest.version.split('.')[0]);
}
