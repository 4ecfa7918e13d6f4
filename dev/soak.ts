/**
 * `npm run soak -- --minutes 10`: the reference gateway (`agent-gateway serve`, its own process, on loopback)
 * under steady mixed traffic for a while, its resident memory sampled: the fuzz's raw and fetch requests
 * (valid tool calls, refused and broken ones, compressed bodies, stalls), fresh request ids and idempotency
 * keys, and connections that open and send nothing. Prints a line per minute (requests, answers by class, RSS)
 * and at the end the RSS after warm-up against the last minute's: flat means every store is bounded. Exits 1
 * if an answer broke the fuzz property or the server died.
 */
import { connect } from 'node:net';
import { Command } from 'commander';
import fc from 'fast-check';
import { intOption } from '../cli/cli-options.ts';
import { seedOf, withFuzzTarget, withSeedOption } from './fuzz-target.ts';
import {
  fetchRequestArb,
  type Outcome,
  outcomeViolations,
  rawRequestArb,
  sendFetch,
  sendRaw,
  showRequest,
} from './http-fuzz.ts';

const options = withSeedOption(
  new Command()
    .name('soak')
    .description('steady mixed traffic against the reference gateway, memory sampled (loopback only)')
    .option('-m, --minutes <n>', 'how long', intOption(1, 240), 3)
    .option('-r, --rate <n>', 'requests per second', intOption(1, 5000), 300)
    .option(
      '--max-in-flight <n>',
      'requests in flight at most (beyond it a tick sends fewer)',
      intOption(1, 900),
      200,
    ),
  'fast-check seed',
)
  .parse()
  .opts<{ minutes: number; rate: number; maxInFlight: number; seed?: number }>();

const seed = seedOf(options.seed);
const TICK_MS = 100;
const SAMPLE_MS = 5000;
const DEADLINE_MS = 20_000;
const API_KEYS = ['ak_verified_2b8d4f6a1c9e', 'ak_early_7c3e9a1b5d2f', 'ak_allowlisted_9e5a3c7b1d4f'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const classOf = (outcome: Outcome) =>
  outcome.answers.length === 0 ? 'none' : `${Math.floor((outcome.answers[0]?.status ?? 0) / 100)}xx`;

/** A connection that sends nothing: the server must close it (headers timeout) or shed it. */
function silentConnection(port: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    // Reading (and discarding) what the server sends is how its 408 and close are seen.
    socket.resume();
    socket.once('close', () => resolve());
    setTimeout(() => socket.destroy(), DEADLINE_MS);
  });
}

async function main() {
  await withFuzzTarget(
    'soak',
    { headers_timeout_ms: 2000, request_timeout_ms: 3000, idle_timeout_ms: 2000 },
    API_KEYS,
    async (target) => {
      const { pid, port, tokens } = target;
      // Steady traffic: one fetch-like tool call for every raw request, each with a fresh request id and key.
      const raw = fc.infiniteStream(rawRequestArb(tokens));
      const viaFetch = fc.infiniteStream(fetchRequestArb(tokens));
      const [rawRequests] = fc.sample(raw, { numRuns: 1, seed });
      const [fetchRequests] = fc.sample(viaFetch, { numRuns: 1, seed: seed + 1 });
      if (!rawRequests || !fetchRequests) throw new Error('no generator');
      const rawIterator = rawRequests[Symbol.iterator]();
      const fetchIterator = fetchRequests[Symbol.iterator]();

      const totals = new Map<string, number>();
      const minute = new Map<string, number>();
      const count = (key: string) => {
        totals.set(key, (totals.get(key) ?? 0) + 1);
        minute.set(key, (minute.get(key) ?? 0) + 1);
      };
      const violations: string[] = [];
      const samples: { at: number; rss: number }[] = [];
      let inFlight = 0;
      let sent = 0;
      let skipped = 0;
      let serial = 0;
      const started = performance.now();
      const endAt = started + options.minutes * 60_000;
      process.stdout.write(
        `Soak of ${target.url} (pid ${pid}): ${options.rate} requests/s for ${options.minutes} min, seed ${seed}\n` +
          'minute  requests      2xx      4xx      5xx  no answer  RSS MB (min-max of the minute)\n',
      );

      const one = async () => {
        serial += 1;
        inFlight += 1;
        try {
          if (serial % 500 === 0) {
            await silentConnection(port);
            count('silent connection');
            return;
          }
          if (serial % 2 === 0) {
            const request = rawIterator.next().value;
            const outcome = await sendRaw(port, request, DEADLINE_MS);
            count(classOf(outcome));
            for (const problem of outcomeViolations(outcome, request.method, request.bytes))
              violations.push(`raw: ${problem} <- ${showRequest(request.bytes)}`);
            return;
          }
          const request = fetchIterator.next().value;
          request.headers['x-request-id'] = `soak-${serial}`;
          request.headers['idempotency-key'] = `"soak-${serial}"`;
          const outcome = await sendFetch(target.url, request, DEADLINE_MS);
          count(classOf(outcome));
          for (const problem of outcomeViolations(outcome, request.method))
            violations.push(`fetch: ${problem} <- ${request.method} ${request.path}`);
        } finally {
          inFlight -= 1;
        }
      };

      let nextSample = started;
      let minuteIndex = 0;
      let minuteSamples: number[] = [];
      const pending = new Set<Promise<void>>();
      const report = () => {
        minuteIndex += 1;
        const n = (key: string) => String(minute.get(key) ?? 0).padStart(8);
        const total = [...minute.values()].reduce((a, b) => a + b, 0);
        process.stdout.write(
          `${String(minuteIndex).padStart(6)}  ${String(total).padStart(8)} ${n('2xx')} ${n('4xx')} ${n('5xx')} ${String(minute.get('none') ?? 0).padStart(10)}  ${(minuteSamples.at(-1) ?? 0).toFixed(0)} (${Math.min(...minuteSamples).toFixed(0)}-${Math.max(...minuteSamples).toFixed(0)})\n`,
        );
        minute.clear();
        minuteSamples = [];
      };
      while (performance.now() < endAt && !target.exited()) {
        const tickStart = performance.now();
        // Steady: as many as the rate asks for by now, whatever a tick cost.
        const due = Math.floor(((tickStart - started) / 1000) * options.rate) - sent - skipped;
        for (let i = 0; i < due; i++) {
          if (inFlight >= options.maxInFlight) {
            skipped += 1;
            continue;
          }
          sent += 1;
          const work = one();
          pending.add(work);
          void work.finally(() => pending.delete(work));
        }
        if (tickStart >= nextSample) {
          const rss = target.rssMb();
          samples.push({ at: tickStart - started, rss });
          minuteSamples.push(rss);
          nextSample += SAMPLE_MS;
        }
        if (tickStart - started >= (minuteIndex + 1) * 60_000) report();
        await sleep(Math.max(0, TICK_MS - (performance.now() - tickStart)));
      }
      await Promise.all(pending);
      minuteSamples.push(target.rssMb());
      report();

      const alive = !target.exited() && (await fetch(`${target.url}/v1/health`)).status === 200;
      const afterWarmup = samples.filter((s) => s.at >= 60_000);
      const lastMinute = samples.filter((s) => s.at >= (options.minutes - 1) * 60_000);
      const firstRss = (afterWarmup[0] ?? samples[0])?.rss ?? 0;
      const lastRss = lastMinute.reduce((sum, s) => sum + s.rss, 0) / Math.max(1, lastMinute.length);
      const seconds = Math.min(performance.now() - started, options.minutes * 60_000) / 1000;
      process.stdout.write(
        `\n${sent} requests in ${seconds.toFixed(0)} s (${(sent / seconds).toFixed(0)}/s; ${skipped} not sent: ${options.maxInFlight} in flight)\n`,
      );
      for (const [key, n] of [...totals].sort()) process.stdout.write(`  ${key.padEnd(20)} ${n}\n`);
      process.stdout.write(
        `server RSS: ${firstRss.toFixed(0)} MB after the first minute (warm-up), ${lastRss.toFixed(0)} MB on average over the last minute, ${Math.max(...samples.map((s) => s.rss)).toFixed(0)} MB at most (${samples.length} samples, every ${SAMPLE_MS / 1000} s)\n`,
      );
      process.stdout.write(
        `server: ${alive ? 'alive, health 200' : 'NOT answering'}; violations: ${violations.length}\n`,
      );
      for (const violation of violations.slice(0, 20)) process.stdout.write(`  ${violation}\n`);
      process.exitCode = alive && violations.length === 0 ? 0 : 1;
    },
  );
}

await main();
