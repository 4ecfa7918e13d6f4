/**
 * `npx tsx dev/pool-waves.ts`: genuine waves queued in a client's connection pool, captured over HTTP, and
 * how a freed connection is taken up while requests wait (issue 33: what tells a wave queued in the pool
 * from a sequential client's next call). Each run starts a reference gateway (three searches per 30 s for
 * the agent, so the wave meets 429s), warms the pool up with three sequential searches, then sends
 * `--wave` searches at once through a pool limited to `--connections` (undici `Agent({ connections })`
 * with fetch, or node:http `Agent({ keepAlive, maxSockets })`): all but the first few wait in the pool.
 * For every request read within SAME_TURN_MS after another connection's answer (what the client report
 * reads as one of a queued wave), it prints whether that other connection carried its next request
 * before the request's own answer was written ("freed and taken"), and the report's violations.
 * Options: `--runs <n>` per client kind (default 10), `--parallel <n>` runs at once (default 4),
 * `--wave <n>` (default 30), `--connections <n,...>` (default 2,4), `--save <dir>` (every journal as JSON).
 * Loopback only; bounded in runs, requests and time.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { parseArgs } from 'node:util';
import { Agent, fetch as undiciFetch } from 'undici';
import { serve } from '../mock-server/adapters/node-server.ts';
import { SAME_TURN_MS } from '../mock-server/client-report/facts/causality.ts';
import { answeredAt } from '../mock-server/client-report/facts/entry.ts';
import { createGateway } from '../mock-server/gateway.ts';
import type { JournalEntry } from '../mock-server/journal/journal.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    parallel: { type: 'string', default: '4' },
    wave: { type: 'string', default: '30' },
    connections: { type: 'string', default: '2,4' },
    save: { type: 'string' },
  },
});
const runs = Math.min(200, Math.max(1, Number(values.runs)));
const parallel = Math.min(16, Math.max(1, Number(values.parallel)));
const waveSize = Math.min(100, Math.max(2, Number(values.wave)));
// 0: no limit (undici's and node:http's default): nothing waits in the pool, every request beyond the
// idle connections opens one of its own.
const limits = (values.connections as string).split(',').map((n) => Math.min(16, Math.max(0, Number(n))));
if (values.save) mkdirSync(values.save, { recursive: true });

type Send = (query: string) => Promise<number>;
interface Kind {
  name: string;
  pool(baseUrl: string, token: string, connections: number): { send: Send; close(): Promise<void> };
}

const body = (query: string) => JSON.stringify({ query });

const KINDS: Kind[] = [
  {
    name: 'undici-fetch',
    pool(baseUrl, token, connections) {
      const dispatcher = new Agent(connections > 0 ? { connections } : {});
      const send: Send = async (query) => {
        const answer = await undiciFetch(`${baseUrl}/v1/web/search`, {
          method: 'POST',
          headers: { 'x-agent-identity': token, 'content-type': 'application/json' },
          body: body(query),
          dispatcher,
        });
        await answer.text();
        return answer.status;
      };
      return { send, close: () => dispatcher.close() };
    },
  },
  {
    name: 'node-http',
    pool(baseUrl, token, connections) {
      const agent = new HttpAgent({ keepAlive: true, maxSockets: connections > 0 ? connections : Infinity });
      const send: Send = (query) =>
        new Promise((resolve) => {
          const text = body(query);
          const req = httpRequest(
            `${baseUrl}/v1/web/search`,
            {
              method: 'POST',
              agent,
              timeout: 10_000,
              headers: {
                'x-agent-identity': token,
                'content-type': 'application/json',
                'content-length': Buffer.byteLength(text),
              },
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('timeout', () => req.destroy());
          req.on('error', () => resolve(0));
          req.end(text);
        });
      return {
        send,
        close: async () => {
          agent.destroy();
        },
      };
    },
  },
];

/** One run: a gateway of its own, three sequential searches, then a wave through the limited pool. */
async function runOnce(kind: Kind, connections: number) {
  const gateway = createGateway({
    config: {
      rate_limits: {
        rules: [{ name: 'slow', scope: 'agent', algorithm: 'token_bucket', limit: 3, window_seconds: 30 }],
      },
    },
    log: () => {},
  });
  const server = await serve(gateway, { port: 0, log: () => {} });
  const client = kind.pool(server.url, gateway.mintToken('agent-verified'), connections);
  try {
    for (let k = 0; k < 3; k++) await client.send(`warm ${k}`);
    await Promise.all(Array.from({ length: waveSize }, (_, k) => client.send(`wave ${k}`)));
  } finally {
    await client.close();
    await server.close();
  }
  const entries = gateway.journal.list({ agent: 'agent-verified' });
  const report = gateway.clientReport('agent-verified');
  return { entries, violations: report.violations.map((v) => `${v.rule}: ${v.message}`) };
}

/** What followed each answer read as releasing a queued request on another connection. */
interface Sighting {
  /** The request read within SAME_TURN_MS after `x`'s answer, on another connection. */
  r: JournalEntry;
  x: JournalEntry;
  /** `x`'s connection carried its next request before `r`'s answer was written. */
  takenBeforeAnswer: boolean;
  /** ... and before anything else of the agent's was read after `x`'s answer but `r`. */
  takenFirst: boolean;
  /** ms from `x`'s answer to the next request on its connection (Infinity: none). */
  gap: number;
  /** ms `r`'s own connection had been idle before `x`'s answer (NaN: `r` opened its connection). */
  rIdle: number;
}

function sightings(entries: readonly JournalEntry[]): Sighting[] {
  const withFacts = entries.filter((e) => e.connection !== undefined);
  const byArrival = [...withFacts].sort((a, b) => a.real_ms - b.real_ms);
  const onConnection = (c: number | undefined) =>
    byArrival.filter((e) => e.connection === c).sort((a, b) => a.real_ms - b.real_ms);
  const out: Sighting[] = [];
  for (const r of byArrival) {
    for (const x of withFacts) {
      const at = answeredAt(x);
      if (x === r || x.connection === r.connection || at > r.real_ms || at < r.real_ms - SAME_TURN_MS)
        continue;
      const next = onConnection(x.connection).find((e) => e.real_ms > x.real_ms);
      const gap = next ? next.real_ms - at : Number.POSITIVE_INFINITY;
      const between = byArrival.filter(
        (e) => e !== r && e !== next && e.real_ms > at && (next === undefined || e.real_ms < next.real_ms),
      );
      const mine = onConnection(r.connection);
      const before = mine[mine.indexOf(r) - 1];
      out.push({
        r,
        x,
        takenBeforeAnswer: next !== undefined && next.real_ms < answeredAt(r),
        takenFirst: next !== undefined && between.length === 0,
        gap,
        rIdle: before ? at - answeredAt(before) : Number.NaN,
      });
    }
  }
  return out;
}

const jobs = KINDS.flatMap((kind) =>
  limits.flatMap((connections) => Array.from({ length: runs }, () => ({ kind, connections }))),
);
const results: { kind: string; connections: number; found: Sighting[]; violations: string[] }[] = [];
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(parallel, jobs.length) }, async () => {
    for (let k = next++; k < jobs.length; k = next++) {
      const { kind, connections } = jobs[k] as (typeof jobs)[number];
      const { entries, violations } = await runOnce(kind, connections);
      if (values.save)
        writeFileSync(
          `${values.save}/${kind.name}-${connections}-${k}.json`,
          JSON.stringify({ kind: kind.name, connections, violations, entries }, null, 1),
        );
      results.push({ kind: kind.name, connections, found: sightings(entries), violations });
    }
  }),
);

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
for (const kind of KINDS)
  for (const connections of limits) {
    const mine = results.filter((x) => x.kind === kind.name && x.connections === connections);
    const found = mine.flatMap((x) => x.found);
    const queued = found.filter((s) => s.r.query?.startsWith('wave'));
    const untaken = queued.filter((s) => !s.takenBeforeAnswer);
    process.stdout.write(
      `${kind.name} connections ${connections}: ${mine.length} runs; requests of the wave read within ${SAME_TURN_MS} ms after another connection's answer: ${queued.length}; that connection taken before the request's answer: ${queued.length - untaken.length}, first: ${queued.filter((s) => s.takenFirst).length}; gaps (ms) when not: ${untaken.map((s) => fmt(s.gap)).join(' ')}\n`,
    );
    for (const s of untaken)
      process.stdout.write(
        `  not taken: r #${s.r.seq} ${s.r.query} c${s.r.connection}/${s.r.connection_seq} ${s.r.status}; x #${s.x.seq} ${s.x.query} c${s.x.connection} ${s.x.status}; next on it after ${fmt(s.gap)} ms; r's connection idle ${fmt(s.rIdle)} ms before\n`,
      );
    const warm = found.filter((s) => s.r.query?.startsWith('warm'));
    process.stdout.write(
      `  warm-up (sequential) calls read so: ${warm.length}, their other connection taken before the answer: ${warm.filter((s) => s.takenBeforeAnswer).length}\n`,
    );
    const flagged = mine.filter((x) => x.violations.length > 0);
    process.stdout.write(`  runs with violations: ${flagged.length}\n`);
    for (const x of flagged.slice(0, 3)) process.stdout.write(`    ${x.violations.join(' | ')}\n`);
  }
