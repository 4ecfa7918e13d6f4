/**
 * `npm run fuzz -- --requests 100000`: the reference gateway (`agent-gateway serve`, its own process, on
 * loopback) under generated requests, over raw sockets and fetch (dev/http-fuzz.ts), a bounded number of
 * them at a time. Prints the answers counted by status, every violation of the property (no complete
 * answer, a 5xx, an error that is not catalogue JSON) with the request that caused it, and the server's
 * memory; exits 1 on any violation or if the server died, 0 otherwise. Replay a run with its --seed.
 */
import { Command } from 'commander';
import fc from 'fast-check';
import { intOption } from '../cli/cli-options.ts';
import { seedOf, withFuzzTarget, withSeedOption } from './fuzz-target.ts';
import {
  type FetchRequest,
  fetchRequestArb,
  type Outcome,
  outcomeViolations,
  type RawRequest,
  rawRequestArb,
  sendFetch,
  sendRaw,
  showRequest,
} from './http-fuzz.ts';

const options = withSeedOption(
  new Command()
    .name('fuzz')
    .description('fuzz the reference gateway over raw sockets and fetch (loopback only)')
    .option('-n, --requests <n>', 'generated requests in all', intOption(1, 10_000_000), 100_000)
    .option('-c, --concurrency <n>', 'requests in flight at once', intOption(1, 900), 64)
    .option(
      '--fetch-percent <p>',
      'share of requests sent with fetch instead of raw sockets',
      intOption(0, 100),
      30,
    ),
  'fast-check seed (printed; replays a run)',
)
  .parse()
  .opts<{ requests: number; concurrency: number; fetchPercent: number; seed?: number }>();

const seed = seedOf(options.seed);
const CHUNK = 1000;
const DEADLINE_MS = 20_000;
const API_KEYS = ['ak_verified_2b8d4f6a1c9e', 'ak_early_7c3e9a1b5d2f', 'ak_none_4f1d2c9e8b7a'];

async function main() {
  // Short timeouts so that stalled requests are answered in a second or two.
  await withFuzzTarget(
    'fuzz',
    { headers_timeout_ms: 1000, request_timeout_ms: 1500, idle_timeout_ms: 1000 },
    API_KEYS,
    async (target) => {
      const { pid, port, tokens } = target;
      const raw = rawRequestArb(tokens);
      const viaFetch = fetchRequestArb(tokens);
      const counts = new Map<string, number>();
      const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
      const violations: string[] = [];
      let sent = 0;
      const started = performance.now();
      process.stdout.write(
        `Fuzzing ${target.url} (pid ${pid}): ${options.requests} requests, ${options.concurrency} at a time, ${options.fetchPercent}% with fetch, seed ${seed}\n`,
      );

      const judge = (
        transport: string,
        outcome: Outcome,
        method: string,
        shown: string,
        rawBytes?: string,
      ) => {
        for (const answer of outcome.answers) count(`${transport} ${answer.status}`);
        if (outcome.answers.length === 0) count(`${transport} no answer (${outcome.missing})`);
        for (const problem of outcomeViolations(outcome, method, rawBytes))
          violations.push(`${transport}: ${problem} <- ${shown}`);
      };

      for (let chunk = 0; sent < options.requests; chunk++) {
        const size = Math.min(CHUNK, options.requests - sent);
        const fetchCount = Math.round((size * options.fetchPercent) / 100);
        const work: (() => Promise<void>)[] = [
          ...fc
            .sample(raw, { numRuns: size - fetchCount, seed: seed + chunk })
            .map((request: RawRequest) => async () => {
              const outcome = await sendRaw(port, request, DEADLINE_MS);
              judge('raw', outcome, request.method, showRequest(request.bytes), request.bytes);
            }),
          ...fc
            .sample(viaFetch, { numRuns: fetchCount, seed: seed + chunk })
            .map((request: FetchRequest) => async () => {
              const outcome = await sendFetch(target.url, request, DEADLINE_MS);
              judge(
                'fetch',
                outcome,
                request.method,
                `${request.method} ${request.path} ${JSON.stringify(request.headers)}`,
              );
            }),
        ];
        let next = 0;
        await Promise.all(
          Array.from({ length: Math.min(options.concurrency, work.length) }, async () => {
            while (next < work.length) await (work[next++] as () => Promise<void>)();
          }),
        );
        sent += size;
        if (chunk % 10 === 9 || sent >= options.requests)
          process.stdout.write(
            `  ${sent} sent, ${violations.length} violation(s), server RSS ${target.rssMb().toFixed(0)} MB\n`,
          );
        if (target.exited()) break;
      }

      const seconds = (performance.now() - started) / 1000;
      const health = await fetch(`${target.url}/v1/health`).then(
        (r) => r.status,
        () => 0,
      );
      const alive = !target.exited() && health === 200;
      process.stdout.write(
        `\nAnswers by transport and status (${sent} requests in ${seconds.toFixed(1)} s):\n`,
      );
      for (const [key, n] of [...counts].sort(([a], [b]) => a.localeCompare(b)))
        process.stdout.write(`  ${key.padEnd(36)} ${String(n).padStart(8)}\n`);
      process.stdout.write(
        `\nserver: ${alive ? 'alive, health 200' : 'NOT answering'}; RSS ${alive ? target.rssMb().toFixed(0) : '?'} MB\n`,
      );
      process.stdout.write(`violations: ${violations.length}\n`);
      for (const violation of violations.slice(0, 20)) process.stdout.write(`  ${violation}\n`);
      process.stdout.write(`seed ${seed} (replay with --seed ${seed})\n`);
      process.exitCode = violations.length === 0 && alive ? 0 : 1;
    },
  );
}

await main();
