/**
 * Admin reads under load: does reading a big journal hold the gateway's event loop? A gateway process with a
 * synthetic journal of `--entries` (default 1,000,000) entries serves; this process runs `--exports` (default
 * 5) full exports of it at once, each the NDJSON stream of GET /__admin/journal/export (with `--paged`: each
 * paging through GET /__admin/journal instead), while it probes GET /v1/health one request at a time. Prints the health latency seen meanwhile, how long
 * the exports took, and the gateway's own event-loop delay (the longest block) and memory.
 *
 *   npm run bench:admin-reads -- [--entries 1000000] [--exports 5] [--paged] [--cpu-prof DIR]
 *
 * Figures depend on the machine: this prints them, it asserts nothing.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const KEY = 'admin-read-load-key';
const argValue = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};

interface Ready {
  type: 'ready';
  url: string;
  rssMb: number;
}
interface Figures {
  type: 'figures';
  maxDelayMs: number;
  p99DelayMs: number;
  rssMb: number;
  maxGapMs: number;
  cpuOfMaxGapMs: number;
  gapsOver50: number;
  maxGapCpuMs: number;
}

/** The gateway: fills its journal, serves, and reports its event-loop delay when asked. */
async function child(entries: number) {
  const { createGateway } = await import('../mock-server/gateway.ts');
  const { serve } = await import('../mock-server/adapters/node-server.ts');
  const gateway = createGateway({ adminKey: KEY, config: { journal: { capacity: entries } } });
  for (let i = 0; i < entries; i++)
    gateway.journal.record({
      request_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      at: 1_700_000_000_000 + i,
      duration_ms: 0.42,
      real_ms: i,
      written_ms: i + 0.5,
      connection: Math.floor(i / 100),
      connection_opened_ms: i,
      method: 'POST',
      path: '/v1/web/search',
      operation: 'web.search',
      status: i % 10 === 0 ? 429 : 200,
      agent: `agent-${i % 50}`,
      token: 'tok_3f9a2c1b',
      in_flight: 1,
      request_fingerprint: 'fp_1234567890abcdef',
      request_key: 'rk_1234567890abcdef',
      query: `what is item ${i}`,
      quota: [{ rule: 'per-agent', key: `agent-${i % 50}`, limit: 100, remaining: i % 100 }],
    });
  const server = await serve(gateway, { port: 0, log: () => {} });
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  // A drift sampler beside it: each gap between two 5 ms ticks, in wall time and in the CPU time the
  // process used meanwhile. On a loaded machine a gap's wall time is mostly waiting for a core; its CPU time
  // is the work that held the loop.
  let wall = { max: 0, cpuOfMax: 0, over50: 0 };
  let cpu = { max: 0 };
  let lastTick = performance.now();
  let lastCpu = process.cpuUsage();
  setInterval(() => {
    const now = performance.now();
    const used = process.cpuUsage(lastCpu);
    const gap = now - lastTick - 5;
    const gapCpu = (used.user + used.system) / 1000;
    if (gap > wall.max) wall = { ...wall, max: gap, cpuOfMax: gapCpu };
    if (gap > 50) wall.over50 += 1;
    if (gapCpu > cpu.max) cpu = { max: gapCpu };
    lastTick = now;
    lastCpu = process.cpuUsage();
  }, 5).unref();
  const rssMb = () => Math.round(process.memoryUsage().rss / 1e6);
  process.on('message', (message: { type: string }) => {
    if (message.type === 'figures')
      process.send?.({
        type: 'figures',
        maxDelayMs: Math.round(delay.max / 1e5) / 10,
        p99DelayMs: Math.round(delay.percentile(99) / 1e5) / 10,
        rssMb: rssMb(),
        maxGapMs: Math.round(wall.max),
        cpuOfMaxGapMs: Math.round(wall.cpuOfMax),
        gapsOver50: wall.over50,
        maxGapCpuMs: Math.round(cpu.max),
      } satisfies Figures);
    if (message.type === 'reset') {
      delay.reset();
      wall = { max: 0, cpuOfMax: 0, over50: 0 };
      cpu = { max: 0 };
    }
    if (message.type === 'stop') void server.close().then(() => process.exit(0));
  });
  // Never outlive the measuring process.
  process.on('disconnect', () => process.exit(0));
  process.send?.({ type: 'ready', url: server.url, rssMb: rssMb() } satisfies Ready);
}

const ask = <T>(gateway: ChildProcess, type: string, answer: string) =>
  new Promise<T>((resolve) => {
    const on = (message: { type: string }) => {
      if (message.type !== answer) return;
      gateway.off('message', on);
      resolve(message as T);
    };
    gateway.on('message', on);
    gateway.send({ type });
  });

interface Exported {
  entries: number;
  pages: number;
  bytes: number;
  seconds: number;
}

/** One export: the NDJSON stream of GET /__admin/journal/export, counted as it arrives (never held whole). */
async function exportStreamed(url: string): Promise<Exported> {
  const started = performance.now();
  const answer = await fetch(`${url}/__admin/journal/export`, { headers: { 'x-admin-key': KEY } });
  if (!answer.ok || !answer.body)
    throw new Error(
      `export answered ${answer.status} after ${Math.round(performance.now() - started)} ms: ${await answer.text()}`,
    );
  let entries = 0;
  let bytes = 0;
  for await (const chunk of answer.body) {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) entries += 1;
  }
  return { entries, pages: 1, bytes, seconds: (performance.now() - started) / 1000 };
}

/** One export paged through GET /__admin/journal (`--paged`), as `admin journal export` does. */
async function exportPaged(url: string): Promise<Exported> {
  const started = performance.now();
  let since: number | undefined;
  let entries = 0;
  let pages = 0;
  let bytes = 0;
  for (;;) {
    const answer = await fetch(`${url}/__admin/journal${since === undefined ? '' : `?since=${since}`}`, {
      headers: { 'x-admin-key': KEY },
    }).catch(() => undefined);
    // A kept-alive connection closed as it was reused: ask for the same page again.
    if (!answer) continue;
    const text = await answer.text();
    bytes += Buffer.byteLength(text);
    const page = JSON.parse(text) as { entries: unknown[]; more: boolean; next_since: number };
    entries += page.entries.length;
    pages += 1;
    if (!page.more) return { entries, pages, bytes, seconds: (performance.now() - started) / 1000 };
    since = page.next_since;
  }
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

async function main() {
  const entries = argValue('--entries', 1_000_000);
  const exports = argValue('--exports', 5);
  const profileAt = process.argv.indexOf('--cpu-prof');
  const profile =
    profileAt === -1 ? [] : ['--cpu-prof', '--cpu-prof-dir', process.argv[profileAt + 1] ?? '.'];
  const gateway = fork(fileURLToPath(import.meta.url), ['--child', String(entries)], {
    execArgv: [...process.execArgv, ...profile],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    gateway.once('message', (message: Ready) => resolve(message));
    gateway.once('exit', (code) => reject(new Error(`the gateway exited (${code})`)));
  });
  console.log(`gateway ready: ${entries} journal entries, RSS ${ready.rssMb} MB`);
  // Warm up (the first request of each kind loads and compiles code), then measure from a clean slate.
  await (await fetch(`${ready.url}/v1/health`)).text();
  await (await fetch(`${ready.url}/__admin/journal?limit=10`, { headers: { 'x-admin-key': KEY } })).text();
  gateway.send({ type: 'reset' });
  const latencies: number[] = [];
  const failures: string[] = [];
  let exporting = true;
  const probe = (async () => {
    while (exporting) {
      const started = performance.now();
      try {
        await (await fetch(`${ready.url}/v1/health`)).text();
        latencies.push(performance.now() - started);
      } catch (error) {
        // Counted and said, not fatal: a kept-alive connection closed as it was reused is retried.
        failures.push(String((error as Error).cause ?? error));
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const started = performance.now();
  const exportOne = process.argv.includes('--paged') ? exportPaged : exportStreamed;
  const results = await Promise.all(Array.from({ length: exports }, () => exportOne(ready.url)));
  const seconds = (performance.now() - started) / 1000;
  exporting = false;
  await probe;
  const figures = await ask<Figures>(gateway, 'figures', 'figures');
  gateway.send({ type: 'stop' });
  latencies.sort((a, b) => a - b);
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
  console.log(
    `${exports} exports in parallel (${exportOne === exportPaged ? 'paged, GET /__admin/journal' : 'streamed, GET /__admin/journal/export'}): ${results.map((r) => `${r.entries} entries${r.pages > 1 ? `/${r.pages} pages` : ''} ${mb(r.bytes)} in ${r.seconds.toFixed(1)} s`).join(', ')}; all done in ${seconds.toFixed(1)} s`,
  );
  console.log(
    `GET /v1/health meanwhile: ${latencies.length} probes answered, ${failures.length} failed${failures.length ? ` (${[...new Set(failures)].join('; ')})` : ''}, p50 ${ms(quantile(latencies, 0.5))}, p99 ${ms(quantile(latencies, 0.99))}, max ${ms(latencies.at(-1) ?? Number.NaN)}`,
  );
  console.log(
    `gateway event loop: longest block ${ms(figures.maxDelayMs)}, p99 ${ms(figures.p99DelayMs)}; RSS ${ready.rssMb} MB before, ${figures.rssMb} MB after`,
  );
  console.log(
    `gateway drift sampler (5 ms ticks): longest gap ${figures.maxGapMs} ms wall (${figures.cpuOfMaxGapMs} ms of CPU in it), ${figures.gapsOver50} gaps over 50 ms; most CPU in one gap ${figures.maxGapCpuMs} ms (2 cores: up to twice the wall time; GC helper threads count)`,
  );
}

if (process.argv[2] === '--child') await child(Number(process.argv[3]));
else await main();
