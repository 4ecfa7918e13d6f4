/**
 * Bursts from one address: rounds of N concurrent requests (fetch, as an agent's client would send them)
 * against a `serve` process this script starts, and what each request ended with: an HTTP status (503s by
 * code), or a client error (a reset, a closed socket, no answer within the bound). Loopback only, bounded in
 * rounds, requests and time.
 *
 *   npx tsx dev/burst.ts [--rounds 5] [--size 1000] [--store redis://127.0.0.1:6379] [--workers 2]
 *                        [--path /v1/whoami] [--bound-ms 30000] [--pause-ms 0] [--config FILE]
 *
 * Prints one line per round and exits 1 if any request got no HTTP answer or a 503 state_store_unavailable.
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { spawnServe } from './spawn-serve.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    size: { type: 'string', default: '1000' },
    store: { type: 'string' },
    config: { type: 'string' },
    workers: { type: 'string', default: '1' },
    path: { type: 'string', default: '/v1/whoami' },
    'bound-ms': { type: 'string', default: '30000' },
    'pause-ms': { type: 'string', default: '0' },
  },
});
const rounds = Math.min(50, Number(values.rounds));
const size = Math.min(5000, Number(values.size));
const boundMs = Math.min(120_000, Number(values['bound-ms']));
const pauseMs = Math.min(60_000, Number(values['pause-ms']));
const ADMIN = 'burst-admin-key-0123';

const args = ['--admin-key', ADMIN, '--workers', values.workers as string];
if (values.store) args.push('--store', values.store);
if (values.config) args.push('--config', values.config);
const server = await spawnServe(args, { timeoutMs: 60_000 });
const minted = await fetch(`${server.url}/__admin/agents/agent-verified/tokens`, {
  method: 'POST',
  headers: { 'x-admin-key': ADMIN },
});
const { token } = (await minted.json()) as { token: string };

/** The server's established connections (Linux `ss`), or '?' without it. */
function connections(): string {
  try {
    const port = new URL(server.url).port;
    const out = execFileSync('ss', ['-Htn', 'state', 'established', `( sport = :${port} )`], {
      encoding: 'utf8',
    });
    return String(out.split('\n').filter(Boolean).length);
  } catch {
    return '?';
  }
}

/** What one request ended with: `200`, `503 state_store_unavailable`, or the client error's code. */
async function one(): Promise<string> {
  try {
    const res = await fetch(`${server.url}${values.path}`, {
      headers: { 'x-agent-identity': token },
      signal: AbortSignal.timeout(boundMs),
    });
    const text = await res.text();
    if (res.status === 429) return `429 ${/"reason":"([a-z_]+)"/.exec(text)?.[1] ?? ''}`.trim();
    if (res.status < 500) return String(res.status);
    const code = /"code":"([a-z_]+)"/.exec(text)?.[1] ?? '';
    return `${res.status} ${code}`.trim();
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if ((error as Error).name === 'TimeoutError') return `no answer within ${boundMs} ms`;
    return `error ${cause?.code ?? cause?.message ?? (error as Error).message}`;
  }
}

let failed = false;
console.log(
  `${size} concurrent GET ${values.path} per round, ${rounds} rounds, store ${values.store ?? 'memory'}, workers ${values.workers}`,
);
for (let round = 1; round <= rounds; round++) {
  if (round > 1 && pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  const started = performance.now();
  const outcomes = await Promise.all(Array.from({ length: size }, one));
  const counts = new Map<string, number>();
  for (const o of outcomes) counts.set(o, (counts.get(o) ?? 0) + 1);
  const shown = [...counts].map(([o, n]) => `${o}: ${n}`).join(', ');
  console.log(
    `round ${round}: ${shown} (${Math.round(performance.now() - started)} ms; ${connections()} connections open after it)`,
  );
  for (const o of counts.keys())
    if (o.startsWith('error') || o.startsWith('no answer') || o.includes('unavailable')) failed = true;
}
const logged = server
  .output()
  .split('\n')
  .filter((line) => /state store|worker/.test(line));
if (logged.length > 0)
  console.log(`server log (${logged.length} lines):\n  ${logged.slice(0, 10).join('\n  ')}`);
await server.stop();
process.exit(failed ? 1 : 0);
