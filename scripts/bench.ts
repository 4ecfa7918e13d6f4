/**
 * `npm run bench`: the reference gateway's authenticated `POST /v1/web/search` against a bare node:http
 * server, both measured by autocannon in one run on loopback, each server in its own process. The two are
 * measured in alternating rounds and the medians compared, because a shared machine drifts during a run.
 * Prints req/s, latency and the ratio gateway / bare (target >= 0.7).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Command } from 'commander';
import { intOption } from './cli-options.ts';
import { spawnServe } from './spawn-serve.ts';

interface Measurement {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

const options = new Command()
  .name('bench')
  .description('benchmark the reference gateway against a bare node:http server (loopback only)')
  .option('-d, --duration <seconds>', 'measured seconds per server and round', intOption(1, 120), 5)
  .option('-r, --rounds <n>', 'alternating rounds (medians are reported)', intOption(1, 20), 3)
  .option('-c, --connections <n>', 'concurrent connections', intOption(1, 1000), 50)
  .option('-w, --warmup <seconds>', 'warm-up seconds per server (not measured)', intOption(0, 60), 2)
  .option('--json', 'print the figures as JSON')
  .parse()
  .opts<{ duration: number; rounds: number; connections: number; warmup: number; json?: boolean }>();

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** One figure per server: the median round, plus the failures of all rounds. */
const summarise = (name: string, rounds: Measurement[]): Measurement => ({
  name,
  requestsPerSecond: median(rounds.map((m) => m.requestsPerSecond)),
  p50: median(rounds.map((m) => m.p50)),
  p99: median(rounds.map((m) => m.p99)),
  non2xx: rounds.reduce((sum, m) => sum + m.non2xx, 0),
  errors: rounds.reduce((sum, m) => sum + m.errors, 0),
});

const QUERIES = Array.from({ length: 64 }, (_, i) => `benchmark query ${i} about agent tools`);

async function startBare(responseBytes: number): Promise<{ url: string; stop: () => void }> {
  const script = fileURLToPath(new URL('./bench-bare-server.mjs', import.meta.url));
  const child = spawn(process.execPath, [script, String(responseBytes)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /listening on (\S+)/.exec(chunk.toString());
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

async function load(name: string, url: string, token: string, seconds: number): Promise<Measurement> {
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: seconds,
    requests: QUERIES.map((query) => ({
      method: 'POST',
      path: '/v1/web/search',
      headers: { 'content-type': 'application/json', 'x-agent-identity': token },
      body: JSON.stringify({ query, count: 5 }),
    })),
  });
  return {
    name,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

async function main() {
  // Limits are on (their cost is part of the path) but set beyond reach: see fixtures/config/bench.yaml.
  const benchConfig = fileURLToPath(new URL('../fixtures/config/bench.yaml', import.meta.url));
  const gateway = await spawnServe(['--config', benchConfig]);
  try {
    const minted = await fetch(`${gateway.url}/idp/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: 'ak_verified_2b8d4f6a1c9e' }),
    });
    const { token } = (await minted.json()) as { token: string };
    const sample = await fetch(`${gateway.url}/v1/web/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-agent-identity': token },
      body: JSON.stringify({ query: QUERIES[0], count: 5 }),
    });
    const responseBytes = (await sample.text()).length;
    const bare = await startBare(responseBytes);
    try {
      process.stderr.write(
        `Benchmark: ${options.connections} connections, ${options.rounds} alternating rounds of ${options.duration} s per server ` +
          `(after ${options.warmup} s warm-up each), ${responseBytes}-byte responses, loopback only.\n`,
      );
      if (options.warmup > 0) {
        process.stderr.write('warming up...\n');
        await load('warm-up', bare.url, token, options.warmup);
        await load('warm-up', gateway.url, token, options.warmup);
      }
      const bareRounds: Measurement[] = [];
      const gatewayRounds: Measurement[] = [];
      for (let round = 1; round <= options.rounds; round++) {
        bareRounds.push(await load('bare node:http', bare.url, token, options.duration));
        gatewayRounds.push(await load('reference gateway', gateway.url, token, options.duration));
        const [b, g] = [bareRounds.at(-1), gatewayRounds.at(-1)] as [Measurement, Measurement];
        process.stderr.write(
          `round ${round}/${options.rounds}: bare ${b.requestsPerSecond.toFixed(0)} req/s, gateway ${g.requestsPerSecond.toFixed(0)} req/s\n`,
        );
      }
      const baseline = summarise('bare node:http', bareRounds);
      const measured = summarise('reference gateway', gatewayRounds);
      const ratio = measured.requestsPerSecond / baseline.requestsPerSecond;
      if (options.json) {
        const rounds = { bare: bareRounds, gateway: gatewayRounds };
        process.stdout.write(`${JSON.stringify({ baseline, gateway: measured, ratio, rounds }, null, 2)}\n`);
      } else {
        const row = (m: Measurement) =>
          `${m.name.padEnd(20)} ${m.requestsPerSecond.toFixed(0).padStart(9)} ${String(m.p50).padStart(8)} ${String(m.p99).padStart(8)} ${String(m.non2xx + m.errors).padStart(10)}`;
        process.stdout.write(
          [
            `${'server'.padEnd(20)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non-2xx'.padStart(10)}`,
            row(baseline),
            row(measured),
            `ratio gateway / bare (medians of ${options.rounds} rounds): ${ratio.toFixed(2)} (target >= 0.70)`,
            '',
          ].join('\n'),
        );
      }
      if (measured.non2xx + measured.errors > 0) {
        process.stderr.write(
          'The gateway answered non-2xx or failed requests: the figures do not measure the tool path.\n',
        );
        process.exitCode = 1;
      }
    } finally {
      bare.stop();
    }
  } finally {
    await gateway.stop();
  }
}

await main();
