// `npm run build` (and `prepare`, so `npm ci`, `npm pack` and a git dependency build too): dist/ for the
// package. Plain JavaScript, so it runs before anything is built.
//
// - The library (vocabulary/, mock-server/, conformance/): TypeScript 7 (tsc) emits JavaScript, .d.ts and source maps
//   with the sources inlined (they are not shipped). It rewrites `./x.ts` to `./x.js` in the JavaScript but
//   not in the .d.ts (TypeScript accepts `.ts` there by design; other tools, IDE plug-ins among them, do
//   not), so the declarations are rewritten here. The dashboard's assets are copied beside their module.
// - The CLI: esbuild bundles cli/cli.ts with its dependencies into dist/cli/, one chunk per command, so
//   `--help` and `token` start fast (a bundle starts in about 60% of the time the same modules take loaded
//   one by one; `npm run bench:cli`). cli/agent-gateway.mjs, the `bin`, runs it.
// - The Python package's gateway: the CLI in one file with its fixtures (dev/python-gateway.mjs).
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildPythonGateway } from './python-gateway.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const started = Date.now();

rmSync(dist, { recursive: true, force: true });

const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: 'inherit',
});
if (compiled.status !== 0) {
  process.stderr.write('build: tsc -p tsconfig.build.json failed (see above)\n');
  process.exit(1);
}

// The dashboard's page, script and style are served from beside their module, in the sources and in dist/.
cpSync(join(root, 'mock-server/dashboard/assets'), join(dist, 'mock-server/dashboard/assets'), {
  recursive: true,
});

// A relative module specifier ending in .ts, in `from '…'`, `import '…'` or `import('…')`.
const RELATIVE_TS = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"\n]*?)\.ts\2/g;
let declarations = 0;
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
  const file = join(entry.parentPath, entry.name);
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(RELATIVE_TS, '$1$2$3.js$2');
  if (rewritten !== text) writeFileSync(file, rewritten);
  const left = /(['"])\.{1,2}\/[^'"\n]*\.ts\1/.exec(rewritten);
  if (left) {
    process.stderr.write(`build: ${file} still imports ${left[0]}\n`);
    process.exit(1);
  }
  declarations++;
}

await build({
  absWorkingDir: root,
  entryPoints: { 'agent-gateway': 'cli/cli.ts' },
  outdir: 'dist/cli',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  // Names stay (readable stack traces); whitespace and syntax go (less to parse at start).
  minifyWhitespace: true,
  minifySyntax: true,
  // No source maps here: they would carry every dependency (4 MB); the library's maps cover our code.
  sourcemap: false,
  // commander is CommonJS: its require() calls of node: modules need a require in an ES module.
  banner: {
    js: "import { createRequire as __agentGatewayRequire } from 'node:module'; const require = __agentGatewayRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

// The Python package's gateway (python/agent_gateway_harness/_gateway/): the CLI as one file with its fixtures.
await buildPythonGateway(root);

process.stdout.write(
  `build: dist/ (library: ${declarations} declaration files; CLI: dist/cli/agent-gateway.js; Python package's gateway: python/agent_gateway_harness/_gateway/) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
);
