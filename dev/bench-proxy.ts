/**
 * `npm run bench:proxy` (or `npm run bench -- --proxy`): what proxy mode costs. The reference gateway
 * (fixtures/config/bench.yaml: limits checked, never reached) serves the authenticated `POST /v1/web/search`;
 * autocannon measures it directly and through `agent-gateway proxy --target` in front of it, each server in
 * its own process, in alternating rounds (medians compared), and prints req/s, p50/p99 latency and what the
 * proxy adds to p99. Figures, not assertions: a loaded machine gives larger numbers.
 */
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Command } from 'commander';
import { intOption } from '../cli/cli-options.ts';
import { type LoadOptions, withLoadOptions } from './bench-options.ts';
import { BUILT_CLI_ENTRY, spawnServe } from './spawn-serve.ts';

const BENCH_CONFIG = fileURLToPath(new URL('../fixtures/config/bench.yaml', import.meta.url));

interface Figures {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  failed: number;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function load(url: string, token: string, seconds: number, connections: number) {
  const result = await autocannon({
    url: `${url}/v1/web/search`,
    method: 'POST',
    connections,
    duration: seconds,
    headers: { 'content-type': 'application/json', 'x-agent-identity': token },
    body: JSON.stringify({ query: 'agent tool gateway' }),
  });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors + result.timeouts,
  };
}

/** What the proxy benchmark is run with: the load, JSON output, the proxy's journal body bytes. */
interface ProxyBenchOptions extends LoadOptions {
  json?: boolean;
  journalBodyBytes?: number;
}

/** Runs the proxy benchmark and prints (or returns) its figures. */
export async function runProxyBenchmark(options: ProxyBenchOptions): Promise<Figures[]> {
  const entry = (await import('node:fs')).existsSync(BUILT_CLI_ENTRY) ? BUILT_CLI_ENTRY : undefined;
  const target = await spawnServe(['--config', BENCH_CONFIG], { entry, timeoutMs: 60_000 });
  const proxyArgs = ['--target', target.url, '--config', BENCH_CONFIG];
  if (options.journalBodyBytes !== undefined)
    proxyArgs.push('--journal-body-bytes', String(options.journalBodyBytes));
  const proxy = await spawnServe(proxyArgs, { entry, timeoutMs: 60_000, command: 'proxy' });
  try {
    const minted = await fetch(`${target.url}/idp/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: 'ak_verified_2b8d4f6a1c9e' }),
    });
    const { token } = (await minted.json()) as { token: string };
    const servers = [
      { name: 'gateway alone', url: target.url },
      { name: 'through the proxy', url: proxy.url },
    ];
    for (const s of servers)
      if (options.warmup > 0) await load(s.url, token, options.warmup, options.connections);
    const runs = new Map<string, Awaited<ReturnType<typeof load>>[]>();
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const s of order) {
        const figures = await load(s.url, token, options.duration, options.connections);
        runs.set(s.name, [...(runs.get(s.name) ?? []), figures]);
      }
    }
    const figures: Figures[] = servers.map((s) => {
      const all = runs.get(s.name) ?? [];
      return {
        name: s.name,
        requestsPerSecond: median(all.map((r) => r.requestsPerSecond)),
        p50: median(all.map((r) => r.p50)),
        p99: median(all.map((r) => r.p99)),
        failed: all.reduce((sum, r) => sum + r.failed, 0),
      };
    });
    const [alone, proxied] = figures as [Figures, Figures];
    if (options.json)
      process.stdout.write(
        `${JSON.stringify({ figures, added_p99_ms: proxied.p99 - alone.p99 }, null, 2)}\n`,
      );
    else {
      process.stdout.write(
        [
          `Proxy overhead: POST /v1/web/search, ${options.connections} connections, ${options.rounds} round(s) of ${options.duration} s (medians)`,
          `${'server'.padEnd(20)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'failed'.padStart(7)}`,
          ...figures.map(
            (f) =>
              `${f.name.padEnd(20)} ${f.requestsPerSecond.toFixed(0).padStart(8)} ${String(f.p50).padStart(7)} ${String(f.p99).padStart(7)} ${String(f.failed).padStart(7)}`,
          ),
          `through the proxy: ${((proxied.requestsPerSecond / alone.requestsPerSecond) * 100).toFixed(0)}% of the gateway's req/s, p99 +${(proxied.p99 - alone.p99).toFixed(1)} ms`,
          '',
        ].join('\n'),
      );
    }
    return figures;
  } finally {
    await proxy.stop();
    await target.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const options = withLoadOptions(
    new Command()
      .name('bench-proxy')
      .description('benchmark proxy mode against the gateway alone (loopback only)'),
    3,
  )
    .option(
      '--journal-body-bytes <n>',
      "the proxy's journal.body_bytes (default 2048)",
      intOption(0, 1_048_576),
    )
    .option('--json', 'print the figures as JSON')
    .parse()
    .opts<ProxyBenchOptions>();
  await runProxyBenchmark(options);
}
