/**
 * `npm run bench:cli`: how fast the `agent-gateway` command starts, as users run it from the built package
 * (npm pack, unpacked into a temporary folder: the bin, dist/cli and the fixtures), next to the same
 * commands from the sources (tsx, as `npm start` runs them in a clone). Prints figures; asserts nothing.
 *
 * - `--help` and `token agent-verified` (local mint, with a random AGENT_GATEWAY_SIGNING_SECRET): wall time per run, with hyperfine when it is
 *   installed (Debian: apt-get install hyperfine), else measured here the same way (spawn to exit).
 * - `serve --port 0`: from spawning the process to the first 200 from GET /v1/health.
 *
 * Options: --runs N (default 30), --serve-runs N (default 10), --json.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// `token` mints locally only with a configured signing secret (each gateway otherwise signs with a random
// secret of its own and `token` asks the running one): the timed commands inherit this one.
process.env.AGENT_GATEWAY_SIGNING_SECRET ??= randomBytes(32).toString('base64url');

interface Figures {
  median: number;
  mean: number;
  min: number;
  max: number;
  runs: number;
}

const summarise = (ms: number[]): Figures => {
  const sorted = [...ms].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return {
    median,
    mean: ms.reduce((a, b) => a + b, 0) / ms.length,
    min: sorted[0] as number,
    max: sorted.at(-1) as number,
    runs: ms.length,
  };
};

const hasHyperfine = () => spawnSync('hyperfine', ['--version'], { stdio: 'ignore' }).status === 0;

/** Wall time of a command, spawn to exit, in ms: hyperfine's figures, or our own measurement. */
function timeCommand(command: string[], runs: number): Figures & { tool: string } {
  if (hasHyperfine()) {
    const dir = mkdtempSync(join(tmpdir(), 'bench-cli-'));
    const out = join(dir, 'hyperfine.json');
    const quoted = command.map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ');
    const result = spawnSync(
      'hyperfine',
      ['-N', '--warmup', '3', '--runs', String(runs), '--export-json', out, '--style', 'none', quoted],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    if (result.status !== 0) throw new Error(`hyperfine failed for ${quoted}`);
    const times = (JSON.parse(readFileSync(out, 'utf8')).results[0].times as number[]).map((s) => s * 1000);
    rmSync(dir, { recursive: true, force: true });
    return { ...summarise(times), tool: 'hyperfine' };
  }
  const times: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const started = performance.now();
    const result = spawnSync(command[0] as string, command.slice(1), { stdio: 'ignore' });
    if (result.status !== 0) throw new Error(`${command.join(' ')} exited with ${result.status}`);
    if (i >= 3) times.push(performance.now() - started); // the first three warm the file cache
  }
  return { ...summarise(times), tool: 'spawnSync' };
}

/** From spawning `serve --port 0` to the first 200 from /v1/health, in ms. */
async function timeServeToHealth(entry: string): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [entry, 'serve', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 30_000);
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const found = /listening on (http:\/\/\S+)/.exec(output)?.[1];
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      });
      child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${output}`)));
    });
    const response = await fetch(`${url}/v1/health`);
    if (response.status !== 200) throw new Error(`/v1/health answered ${response.status}`);
    return performance.now() - started;
  } finally {
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  }
}

/** npm pack, unpacked: the files an installed package has, without the sources. */
function unpackedPackage(): { dir: string; entry: string } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cli-package-'));
  process.stderr.write('npm pack (builds dist/) ...\n');
  const packed = spawnSync('npm', ['pack', '--silent', '--pack-destination', dir], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`);
  const tarball = join(dir, packed.stdout.trim().split('\n').at(-1) as string);
  const untar = spawnSync('tar', ['-xzf', tarball, '-C', dir]);
  if (untar.status !== 0) throw new Error(`tar -xzf ${tarball} failed`);
  return { dir, entry: join(dir, 'package', 'cli', 'agent-gateway.mjs') };
}

const program = new Command()
  .name('bench:cli')
  .option('--runs <n>', 'runs per command', (v) => Number.parseInt(v, 10), 30)
  .option('--serve-runs <n>', 'serve starts to time', (v) => Number.parseInt(v, 10), 10)
  .option('--json', 'print the figures as JSON')
  .parse();
const options = program.opts<{ runs: number; serveRuns: number; json?: boolean }>();

const pkg = unpackedPackage();
try {
  const sources = join(ROOT, 'cli', 'agent-gateway.mjs');
  const rows: { what: string; figures: Figures & { tool: string } }[] = [];
  for (const [label, entry] of [
    ['package', pkg.entry],
    ['sources (tsx)', sources],
  ] as const) {
    for (const args of [['--help'], ['token', 'agent-verified']]) {
      process.stderr.write(`timing ${label}: agent-gateway ${args.join(' ')} ...\n`);
      rows.push({
        what: `${label}: agent-gateway ${args.join(' ')}`,
        figures: timeCommand([process.execPath, entry, ...args], options.runs),
      });
    }
  }
  process.stderr.write('timing package: serve --port 0 until /v1/health answers 200 ...\n');
  const serveTimes: number[] = [];
  for (let i = 0; i < options.serveRuns; i++) serveTimes.push(await timeServeToHealth(pkg.entry));
  rows.push({
    what: 'package: serve, spawn to /v1/health 200',
    figures: { ...summarise(serveTimes), tool: 'fetch' },
  });

  if (options.json) process.stdout.write(`${JSON.stringify({ node: process.version, rows }, null, 2)}\n`);
  else {
    const ms = (n: number) => `${n.toFixed(0)} ms`.padStart(8);
    process.stdout.write(`\nNode ${process.version}; wall time per run (median, mean, min, max)\n\n`);
    for (const { what, figures: f } of rows)
      process.stdout.write(
        `${what.padEnd(48)} ${ms(f.median)} ${ms(f.mean)} ${ms(f.min)} ${ms(f.max)}   ${f.runs} runs, ${f.tool}\n`,
      );
  }
} finally {
  rmSync(pkg.dir, { recursive: true, force: true });
}
