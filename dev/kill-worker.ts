/**
 * `serve --workers 2` on a Redis, requests flowing (each on a new connection, so the listen socket hands
 * connections out all the time), one worker killed with SIGKILL by its PID; prints how every request ended.
 * Loopback only, bounded in requests and time.
 *
 *   npx tsx dev/kill-worker.ts --store redis://127.0.0.1:6379 [--requests 4000] [--lanes 50] [--bound-ms 15000]
 *
 * Exits 1 if a request got no answer and no error within the bound (it hung).
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { spawnServe } from './spawn-serve.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    requests: { type: 'string', default: '4000' },
    lanes: { type: 'string', default: '50' },
    'bound-ms': { type: 'string', default: '15000' },
  },
});
if (!values.store) throw new Error('--store redis://HOST:PORT is required (--workers needs a shared store)');
const total = Math.min(50_000, Number(values.requests));
const lanes = Math.min(500, Number(values.lanes));
const boundMs = Math.min(120_000, Number(values['bound-ms']));
const ADMIN = 'kill-worker-admin-key';

const server = await spawnServe(['--admin-key', ADMIN, '--workers', '2', '--store', values.store], {
  timeoutMs: 60_000,
});
const { token } = (await (
  await fetch(`${server.url}/__admin/agents/agent-verified/tokens`, {
    method: 'POST',
    headers: { 'x-admin-key': ADMIN },
  })
).json()) as { token: string };
const workers = execFileSync('ps', ['-o', 'pid=', '--ppid', String(server.child.pid)], { encoding: 'utf8' })
  .split('\n')
  .map((line) => Number(line.trim()))
  .filter((pid) => pid > 0);

async function one(): Promise<string> {
  const started = performance.now();
  try {
    const res = await fetch(`${server.url}/v1/whoami`, {
      headers: { 'x-agent-identity': token, connection: 'close' },
      signal: AbortSignal.timeout(boundMs),
    });
    await res.text();
    return String(res.status);
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return `no answer within ${boundMs} ms`;
    const cause = (error as { cause?: { code?: string } }).cause;
    return `error ${cause?.code ?? (error as Error).message} (after ${Math.round(performance.now() - started)} ms)`.replace(
      /\(after \d+ ms\)/,
      (m) => (Number(/\d+/.exec(m)?.[0]) > 1000 ? 'after more than 1 s' : 'within 1 s'),
    );
  }
}

const outcomes: string[] = [];
let killed = 0;
const lane = async () => {
  while (outcomes.length < total) {
    outcomes.push(await one());
    if (!killed && outcomes.length >= total / 4) {
      killed = workers[0] as number;
      process.kill(killed, 'SIGKILL');
    }
  }
};
await Promise.all(Array.from({ length: lanes }, lane));
const counts = new Map<string, number>();
for (const o of outcomes) counts.set(o, (counts.get(o) ?? 0) + 1);
console.log(
  `${outcomes.length} requests, ${lanes} at a time, each on a new connection; worker ${killed} killed after ${total / 4}`,
);
for (const [o, n] of counts) console.log(`  ${o}: ${n}`);
await server.stop();
process.exit(outcomes.some((o) => o.startsWith('no answer')) ? 1 : 0);
