import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { readYamlFile } from '../mock-server/config/load-config.ts';
import { load, type Measurement, median, summarise } from './bench-rounds.ts';
import { BENCH_CONFIG, mintOne, startGateway, type Target } from './bench-targets.ts';

/** The options of `npm run bench` the shared-state run reads. */
export interface SharedStateOptions {
  connections: number;
  duration: number;
  rounds: number;
  warmup: number;
  workers: number;
  json?: boolean;
}

/**
 * The shared-state run: in memory (one process), on Redis (one process), on Redis (N workers), alternating
 * rounds; then the round trip of one admission script on its own, sequentially.
 */
export async function sharedStateBenchmark(url: string, options: SharedStateOptions) {
  const { Redis } = await import('ioredis');
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await probe.connect();
  } catch (error) {
    probe.disconnect();
    throw new Error(
      `Cannot reach Redis at ${url} (${String(error)}): start one, e.g. redis-server --port 6379 --save ''`,
    );
  }
  const redisPid = Number(/process_id:(\d+)/.exec(await probe.info('server'))?.[1]);
  const dir = mkdtempSync(join(tmpdir(), 'agent-gateway-bench-'));
  const targets: Target[] = [];
  const configFor = (prefix: string | undefined) => {
    const file = join(dir, `${prefix ?? 'memory'}.yaml`);
    const base = readYamlFile(BENCH_CONFIG) as Record<string, unknown>;
    writeFileSync(
      file,
      stringify({
        ...base,
        ...(prefix ? { store: { url, key_prefix: `agw-bench-${prefix}-${process.pid}` } } : {}),
      }),
    );
    return file;
  };
  try {
    targets.push(await startGateway('in memory, 1 process', configFor(undefined), mintOne));
    const one = await startGateway('Redis, 1 process', configFor('one'), mintOne);
    targets.push({ ...one, sidecarPid: redisPid });
    const many = await startGateway(`Redis, ${options.workers} workers`, configFor('many'), mintOne, [
      '--workers',
      String(options.workers),
    ]);
    targets.push({ ...many, sidecarPid: redisPid });
    process.stderr.write(
      `Benchmark: ${options.connections} connections, ${options.rounds} alternating rounds of ${options.duration} s, the load generator in this process (it needs a core of its own: on a 2-core machine, 2 workers share one core with Redis and the generator).\n`,
    );
    if (options.warmup > 0)
      for (const target of targets) await load(target, options.warmup, options.connections);
    const rounds = new Map<string, Measurement[]>(targets.map((t) => [t.name, []]));
    for (let round = 1; round <= options.rounds; round++) {
      for (const target of targets)
        rounds.get(target.name)?.push(await load(target, options.duration, options.connections));
      process.stderr.write(`round ${round}/${options.rounds} done\n`);
    }
    const results = targets.map((t) => {
      const all = rounds.get(t.name) ?? [];
      const sidecar = all.map((m) => m.sidecarCpuMicros).filter((v): v is number => v !== undefined);
      return {
        ...summarise(t.name, all),
        sidecarCpuMicros: sidecar.length > 0 ? median(sidecar) : undefined,
      };
    });
    // One admission (the limits script) at a time: the Redis round trip a request waits for.
    const { connectSharedStore } = await import('../mock-server/store/shared-store.ts');
    const { loadConfig } = await import('../mock-server/config/load-config.ts');
    const config = loadConfig({ file: configFor('rtt') });
    const store = await connectSharedStore(config, () => {});
    const subject = { agentId: 'agent-verified', tier: 'verified', generation: 0 };
    const samples = 2000;
    const started = performance.now();
    for (let i = 0; i < samples; i++) {
      const decided = await store.limits.admit(
        config.rate_limits.rules,
        subject,
        'web.search',
        Date.now(),
        100_000,
      );
      if (decided.kind === 'decided' && decided.lease) store.limits.release(subject.agentId, decided.lease);
    }
    const roundTripMicros = ((performance.now() - started) * 1000) / samples;
    await store.close();
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ results, roundTripMicros }, null, 2)}\n`);
      return;
    }
    const rows = results.map(
      (m) =>
        `${m.name.padEnd(24)} ${m.requestsPerSecond.toFixed(0).padStart(8)} ${String(m.p50).padStart(7)} ${String(m.p99).padStart(7)} ${m.cpuMicros.toFixed(1).padStart(14)} ${(m.sidecarCpuMicros?.toFixed(1) ?? '-').padStart(13)} ${String(m.non2xx + m.errors).padStart(7)}`,
    );
    const [memory, redisOne] = results as [Measurement, Measurement & { sidecarCpuMicros?: number }];
    process.stdout.write(
      `${[
        `${'gateway'.padEnd(24)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'gateway µs/req'.padStart(14)} ${'Redis µs/req'.padStart(13)} ${'failed'.padStart(7)}`,
        ...rows,
        '',
        `Redis calls per request: the admission script (the one round trip a request waits for), the lease's release and a share of the tick's journal write (neither awaited); one admission alone: ${roundTripMicros.toFixed(0)} µs (sequential, loopback, ${samples} samples)`,
        `Redis cost per request, 1 process: gateway CPU +${(redisOne.cpuMicros - memory.cpuMicros).toFixed(1)} µs, Redis CPU ${redisOne.sidecarCpuMicros?.toFixed(1) ?? '?'} µs`,
      ].join('\n')}\n`,
    );
  } finally {
    await Promise.all(targets.map((t) => t.stop()));
    rmSync(dir, { recursive: true, force: true });
    const keys = await probe.keys('agw-bench-*');
    if (keys.length > 0) await probe.del(...keys);
    probe.disconnect();
  }
}
