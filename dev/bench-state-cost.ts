/**
 * `npx tsx dev/bench-state-cost.ts [--store redis://HOST:PORT] [--rounds 5] [--requests 10000]`: what the
 * state store costs a request, without HTTP. One gateway in this process (`fixtures/config/bench.yaml`)
 * answers authenticated searches through `gateway.fetch`, `--concurrency` at a time; each round prints this
 * process's CPU time per request (`process.cpuUsage()`) and, on Redis, Redis's (its `process_id`, from
 * `/proc`), with the load average. Without `--store`, the in-memory store. Run it for two builds of the
 * sources in turn (a checkout of main, then this one) to compare them on the same machine at the same time.
 */
import { loadavg } from 'node:os';
import { Command } from 'commander';
import { intOption } from '../cli/cli-options.ts';
import { loadConfig } from '../mock-server/config/load-config.ts';
import { createSharedGateway } from '../mock-server/gateway.ts';
import { QUERIES } from './bench-rounds.ts';
import { BENCH_CONFIG, cpuMs } from './bench-targets.ts';

const options = new Command()
  .name('bench-state-cost')
  .option('--store <url>', 'a Redis URL (default: the in-memory store)', 'memory')
  .option('--rounds <n>', 'rounds', intOption(1, 100), 5)
  .option('--requests <n>', 'requests per round', intOption(100, 10_000_000), 10_000)
  .option('--concurrency <n>', 'requests in flight at once', intOption(1, 1000), 50)
  .parse()
  .opts<{ store: string; rounds: number; requests: number; concurrency: number }>();

const base = loadConfig({ file: BENCH_CONFIG });
const config = {
  ...base,
  store: { ...base.store, url: options.store, key_prefix: `agw-bench-cost-${process.pid}` },
};
const gateway = await createSharedGateway({ config, log: () => {} });
const redis = gateway.runtime.shared?.connection.redis as unknown as
  | { info(section: string): Promise<string> }
  | undefined;
const redisPid = redis ? Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]) : undefined;
const token = gateway.mintToken('agent-verified');
const search = (n: number) =>
  gateway
    .fetch(
      new Request('http://gw.test/v1/web/search', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-agent-identity': token },
        body: JSON.stringify({ query: QUERIES[n % QUERIES.length], count: 5 }),
      }),
    )
    .then((answer) => {
      if (answer.status !== 200) throw new Error(`a search answered ${answer.status}`);
      return answer.text();
    });
try {
  for (let round = 1; round <= options.rounds; round++) {
    const load = loadavg()[0] as number;
    const redisBefore = redisPid ? cpuMs(redisPid) : 0;
    const before = process.cpuUsage();
    for (let sent = 0; sent < options.requests; sent += options.concurrency)
      await Promise.all(Array.from({ length: options.concurrency }, (_, i) => search(sent + i)));
    const used = process.cpuUsage(before);
    const redisMicros = redisPid ? ((cpuMs(redisPid) - redisBefore) * 1000) / options.requests : undefined;
    process.stdout.write(
      `round ${round}/${options.rounds} (${options.store === 'memory' ? 'in memory' : 'on Redis'}, load average ${load.toFixed(2)}): gateway ${((used.user + used.system) / options.requests).toFixed(1)} µs/request${redisMicros === undefined ? '' : `, Redis ${redisMicros.toFixed(1)} µs/request`}\n`,
    );
  }
} finally {
  await gateway.close();
  // The keys this run wrote (its own prefix), once the gateway is gone (deleted under it, they would be a
  // wipe it repairs).
  if (redisPid) {
    const { Redis } = await import('ioredis');
    const probe = new Redis(options.store);
    const keys = await probe.keys(`${config.store.key_prefix}:*`);
    if (keys.length > 0) await probe.del(...keys);
    probe.disconnect();
  }
}
