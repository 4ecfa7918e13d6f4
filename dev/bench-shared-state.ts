import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { readYamlFile } from '../mock-server/config/load-config.ts';
import { type LoadSamples, sampleLoad } from './bench-report.ts';
import { load, QUERIES } from './bench-rounds.ts';
import {
  callsPerRequest,
  commandCalls,
  type SharedNames,
  type SharedRound,
  sharedRatios,
  sharedReport,
} from './bench-shared-report.ts';
import { BENCH_CONFIG, mintOne, startBare, startGateway, type Target } from './bench-targets.ts';

/** The options of `npm run bench` the shared-state run reads. */
interface SharedStateOptions {
  connections: number;
  duration: number;
  rounds: number;
  warmup: number;
  workers: number;
  json?: boolean;
}

/**
 * The shared-state run (`npm run bench -- --store redis://...`): bare node:http (like-for-like), the gateway
 * in memory (one process), on Redis (one process) and on Redis (N workers), saturated, in alternating
 * rounds (the order reversed every other round), with each server's CPU per request (workers included),
 * Redis's (its process, from /proc), Redis's commands per request (INFO commandstats around each round) and
 * the load average before the run started anything (the run is labelled by it) and before each round; then the round trip of one admission script on its own.
 */
export async function sharedStateBenchmark(
  store: string,
  options: SharedStateOptions,
  before = sampleLoad(),
) {
  // `--store auto`: a redis-server of the run's own (loopback, no persistence), as the tests start theirs.
  const own = store === 'auto' ? await (await import('../test/support/redis.ts')).startRedis() : undefined;
  try {
    await measureShared(own?.url ?? store, options, before);
  } finally {
    await own?.stop();
    own?.cleanup();
  }
}

async function measureShared(url: string, options: SharedStateOptions, before: number) {
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
  const names: SharedNames = {
    bare: 'bare node:http, like-for-like',
    memory: 'gateway, 1 process, in memory',
    redisOne: 'gateway, 1 process, Redis',
    workers: `gateway, --workers ${options.workers}, Redis`,
    workerCount: options.workers,
  };
  try {
    const memory = await startGateway(names.memory, configFor(undefined), mintOne);
    const sample = await fetch(`${memory.url}/v1/web/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-agent-identity': memory.tokens[0] as string },
      body: JSON.stringify({ query: QUERIES[0], count: 5 }),
    });
    const sampleFile = join(dir, 'sample.json');
    writeFileSync(sampleFile, await sample.text());
    targets.push({ ...(await startBare('like-for-like', sampleFile, names.bare)), tokens: memory.tokens });
    targets.push(memory);
    const one = await startGateway(names.redisOne, configFor('one'), mintOne);
    targets.push({ ...one, sidecarPid: redisPid });
    const many = await startGateway(names.workers, configFor('many'), mintOne, [
      '--workers',
      String(options.workers),
    ]);
    targets.push({ ...many, sidecarPid: redisPid });
    process.stderr.write(
      `Benchmark: ${options.connections} connections, ${options.rounds} alternating rounds of ${options.duration} s per server, saturated; the load generator runs in this process and shares the machine's cores with the servers and Redis.\n`,
    );
    const loadAverage: LoadSamples = { before, start: sampleLoad(), rounds: [], end: Number.NaN };
    if (options.warmup > 0)
      for (const target of targets) await load(target, options.warmup, options.connections);
    const rounds = new Map<string, SharedRound[]>(targets.map((t) => [t.name, []]));
    for (let round = 1; round <= options.rounds; round++) {
      loadAverage.rounds.push(sampleLoad());
      const order = round % 2 ? targets : [...targets].reverse();
      const line: string[] = [];
      for (const target of order) {
        const calls = target.sidecarPid ? commandCalls(await probe.info('commandstats')) : undefined;
        const measured: SharedRound = await load(target, options.duration, options.connections);
        if (calls) {
          const answered = measured.answered ?? measured.requestsPerSecond * options.duration;
          measured.commands = callsPerRequest(
            calls,
            commandCalls(await probe.info('commandstats')),
            answered,
          );
        }
        rounds.get(target.name)?.push(measured);
        line.push(`${target.name} ${measured.requestsPerSecond.toFixed(0)} req/s`);
      }
      process.stderr.write(
        `round ${round}/${options.rounds} (load average ${loadAverage.rounds.at(-1)?.toFixed(2)}): ${line.join('; ')}\n`,
      );
    }
    loadAverage.end = sampleLoad();
    const roundTripMicros = await admissionRoundTrip(configFor('rtt'));
    if (options.json) {
      process.stdout.write(
        `${JSON.stringify({ names, rounds: Object.fromEntries(rounds), ratios: sharedRatios(names, rounds), load: loadAverage, roundTripMicros }, null, 2)}\n`,
      );
      return;
    }
    process.stdout.write(
      `${sharedReport(names, rounds, loadAverage, options.connections, roundTripMicros)}\n`,
    );
  } finally {
    await Promise.all(targets.map((t) => t.stop()));
    rmSync(dir, { recursive: true, force: true });
    const keys = await probe.keys('agw-bench-*');
    if (keys.length > 0) await probe.del(...keys);
    probe.disconnect();
  }
}

/** One admission (the limits script) at a time: the Redis round trip a request waits for, in µs. */
async function admissionRoundTrip(configFile: string): Promise<number> {
  const { connectSharedStore } = await import('../mock-server/store/shared-store.ts');
  const { loadConfig } = await import('../mock-server/config/load-config.ts');
  const config = loadConfig({ file: configFile });
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
  const micros = ((performance.now() - started) * 1000) / samples;
  await store.close();
  return micros;
}
