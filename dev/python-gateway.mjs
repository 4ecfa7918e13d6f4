// The gateway the Python package (python/, the pytest plugin) runs: the CLI as ONE esbuild file with
// every dependency inside, plus the fixtures and dashboard files it reads, in
// python/agent_gateway_harness/_gateway/ (gitignored). The wheel ships that folder, and the plugin runs
// `node _gateway/cli/agent-gateway.mjs serve --port 0`: no node_modules and no npm registry at that point.
// `npm run build` (so `npm install` / `npm ci`) makes it; `npm run test:python` remakes it before testing.
// The layout keeps the paths the runtime looks for beside itself: ../fixtures/ (mock-server/fixtures-dir.ts)
// and ../mock-server/dashboard/assets/ (mock-server/routes/dashboard-routes.ts).
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { CLI_BUNDLE_OPTIONS } from './cli-bundle-options.mjs';

/** The fixtures the runtime reads (those package.json "files" ships). */
const FIXTURES = ['config/default.yaml', 'search', 'pages', 'scenarios'];

/**
 * Builds the Python package's gateway into python/agent_gateway_harness/_gateway/ (or `out`: the container
 * image's build stage, `node dev/python-gateway.mjs /out/app`, ships the same bundle); returns its folder.
 */
export async function buildPythonGateway(
  root = fileURLToPath(new URL('..', import.meta.url)),
  out = join(root, 'python/agent_gateway_harness/_gateway'),
) {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  await build({
    ...CLI_BUNDLE_OPTIONS,
    absWorkingDir: root,
    entryPoints: ['cli/cli.ts'],
    outfile: join(out, 'cli/agent-gateway.mjs'),
    splitting: false,
  });

  for (const path of FIXTURES)
    cpSync(join(root, 'fixtures', path), join(out, 'fixtures', path), { recursive: true });
  cpSync(join(root, 'mock-server/dashboard/assets'), join(out, 'mock-server/dashboard/assets'), {
    recursive: true,
  });
  // The client report's JSON Schema (the contract the plugin reads: docs/any-language.md).
  cpSync(join(root, 'mock-server/client-report/report.schema.json'), join(out, 'report.schema.json'));
  writeFileSync(
    join(out, 'README.txt'),
    'Built by dev/python-gateway.mjs (npm run build): the agent-gateway CLI bundled into one file, with its fixtures. Do not edit.\n',
  );
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = await buildPythonGateway(undefined, process.argv[2] && resolve(process.argv[2]));
  process.stdout.write(`build: ${out}/cli/agent-gateway.mjs\n`);
}
