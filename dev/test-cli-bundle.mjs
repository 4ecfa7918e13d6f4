// vitest's global setup (vitest.config.ts): the CLI bundled once per test run, so the tests that run
// `agent-gateway` as a process (the CLI's own tests, served gateways, proxies) start the built bundle, as
// the installed package does, instead of compiling the sources with tsx at every start. It is built from
// the sources of this run (esbuild, about a second) with the package's bundle options
// (dev/cli-bundle-options.mjs), into node_modules/.cache/, with links to the fixtures and the dashboard's
// files where the runtime looks for them (as dev/python-gateway.mjs lays them out). The tests find it in
// $AGENT_GATEWAY_TEST_CLI (dev/spawn-serve.ts: CLI_ENTRY); a run with AGENT_GATEWAY_TEST_CLI=sources
// runs the sources through tsx instead.
import { mkdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { CLI_BUNDLE_OPTIONS } from './cli-bundle-options.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Builds the CLI into a fresh folder under node_modules/.cache/; returns the bundle's entry. */
export async function buildTestCli() {
  const cache = join(root, 'node_modules', '.cache');
  const out = join(cache, `agent-gateway-test-cli-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  const building = `${out}.building`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(join(building, 'mock-server', 'dashboard'), { recursive: true });
  await build({
    ...CLI_BUNDLE_OPTIONS,
    absWorkingDir: root,
    entryPoints: { 'agent-gateway': 'cli/cli.ts' },
    outdir: join(building, 'cli'),
    splitting: true,
  });
  symlinkSync(join(root, 'fixtures'), join(building, 'fixtures'));
  symlinkSync(
    join(root, 'mock-server', 'dashboard', 'assets'),
    join(building, 'mock-server', 'dashboard', 'assets'),
  );
  renameSync(building, out);
  return { entry: join(out, 'cli', 'agent-gateway.js'), dir: out };
}

export default async function setup() {
  if (process.env.AGENT_GATEWAY_TEST_CLI === 'sources') {
    delete process.env.AGENT_GATEWAY_TEST_CLI;
    return;
  }
  const { entry, dir } = await buildTestCli();
  process.env.AGENT_GATEWAY_TEST_CLI = entry;
  return () => rmSync(dir, { recursive: true, force: true });
}
