/**
 * `npm run bench -- --stages`: where a request's time goes. Each stage of the authenticated search pipeline
 * is called in process, many times, on a prepared request (the gateway of fixtures/config/bench.yaml), and
 * its cost printed in microseconds per call; then the whole core, and (from short load runs of the real
 * server processes) what node:http and the adapter add. Last, the client report over a 100,000-entry journal.
 * Figures, not assertions: a loaded machine gives larger numbers, in proportion.
 */
import { fileURLToPath } from 'node:url';
import { createClientReport } from '../mock-server/client-report/report.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { journalFingerprint } from '../mock-server/hash.ts';
import type { CallContext, GatewayRequest } from '../mock-server/http/context.ts';
import { parseJsonBody } from '../mock-server/http/read-body.ts';
import { requestIdFor } from '../mock-server/http/request-id.ts';
import { NO_STORE, respondJsonText } from '../mock-server/http/respond.ts';
import type { JournalEntry } from '../mock-server/journal/journal.ts';
import { type Admission, admit } from '../mock-server/pipeline/admit.ts';
import { authorize } from '../mock-server/pipeline/authorize.ts';
import { idempotencyKey } from '../mock-server/pipeline/idempotency-key.ts';
import { identify } from '../mock-server/pipeline/identify.ts';
import { injectFault } from '../mock-server/pipeline/inject-fault.ts';
import { noteOutgoingText } from '../mock-server/pipeline/outgoing-text.ts';
import { recordCall } from '../mock-server/pipeline/record.ts';
import { runTool, type SerialisedAnswer } from '../mock-server/pipeline/run-tool.ts';
import type { ToolSpec } from '../mock-server/pipeline/tool-spec.ts';
import { registerGatewayRoutes, toolSpecs } from '../mock-server/routes/gateway-routes.ts';
import { SPEC_ROUTES } from '../mock-server/routes/public-route-table.ts';
import { routerFromTable, routingPath } from '../mock-server/routes/router.ts';
import { requestKey } from '../mock-server/tools/request-meaning.ts';

const BENCH_CONFIG = fileURLToPath(new URL('../fixtures/config/bench.yaml', import.meta.url));
const BATCH = 20_000;
const BATCHES = 7;

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

type Timed = [name: string, fn: (i: number) => unknown];

/**
 * Microseconds per call of each function, in interleaved rounds: every round times one batch of each, so a
 * machine that slows down or speeds up during the run (a shared one does, by tens of percent) weighs on all
 * of them alike. Returns each one's batches, in round order, after a warm-up batch. A function that returns
 * a promise is awaited, call by call.
 */
async function timeInterleaved(entries: Timed[]): Promise<number[][]> {
  const run = async (fn: Timed[1]) => {
    const start = performance.now();
    for (let i = 0; i < BATCH; i++) {
      const out = fn(i);
      if (out instanceof Promise) await out;
    }
    return ((performance.now() - start) * 1000) / BATCH;
  };
  for (const [, fn] of entries) await run(fn);
  const perCall: number[][] = entries.map(() => []);
  for (let b = 0; b < BATCHES; b++)
    for (const [k, [, fn]] of entries.entries()) perCall[k]?.push(await run(fn));
  return perCall;
}

/**
 * A client report over `count` journal entries of one agent: retries, 429s, 5xx, fetches, searches, with the
 * journal's connection facts and request keys (the report's costliest inputs).
 */
function reportOverJournal(count: number, gateway: ReturnType<typeof createGateway>): number {
  const entries: JournalEntry[] = [];
  for (let i = 0; i < count; i++) {
    const real = i * 7;
    const kind = i % 20;
    const status = kind === 0 ? 429 : kind === 7 ? 503 : 200;
    entries.push({
      seq: i + 1,
      request_id: `r${i}`,
      at: 1_800_000_000_000 + real,
      time: '',
      duration_ms: 1,
      real_ms: real,
      written_ms: real + 1,
      method: 'POST',
      path: i % 2 ? '/v1/web/search' : '/v1/web/fetch',
      operation: i % 2 ? 'web.search' : 'web.fetch',
      status,
      ...(status === 429
        ? { code: 'rate_limited', retry_after: '1', limit: { rule: 'per-agent', scope: 'agent', key: 'a' } }
        : {}),
      ...(status === 503 ? { code: 'upstream_unavailable' } : {}),
      agent: 'agent-verified',
      token: 'tok_1',
      request_fingerprint: `req_${i % 500}`,
      request_key: `key_${i % 500}`,
      // Over node:http: fifty requests per connection, one at a time, as a pooled client sends them.
      connection: Math.floor(i / 50) + 1,
      connection_seq: (i % 50) + 1,
      connection_opened_ms: (i - (i % 50)) * 7 - 0.5,
      ...(i % 2 ? { query: `query ${i % 500}` } : { url: `https://site${i % 500}.example/` }),
    });
  }
  const times: number[] = [];
  for (let k = 0; k < 3; k++) {
    const start = performance.now();
    createClientReport({
      agent: 'agent-verified',
      entries,
      rateLimitRules: gateway.config.rate_limits.rules,
      corpus: gateway.corpus,
    });
    times.push(performance.now() - start);
  }
  return median(times);
}

export async function runStageBenchmark(options: { json: boolean }) {
  const gateway = createGateway({ configFile: BENCH_CONFIG, log: () => {} });
  const { runtime } = gateway;
  const token = gateway.mintToken('agent-verified');
  const [search] = toolSpecs(runtime, runtime.tools) as [ToolSpec];
  const bodyText = JSON.stringify({ query: 'benchmark query 1 about agent tools', count: 5 });
  const bytes = Buffer.from(bodyText);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-agent-identity': token,
    'content-length': String(bytes.length),
  };
  const request: GatewayRequest = {
    method: 'POST',
    path: '/v1/web/search',
    query: '',
    header: (name) => headers[name],
    body: async () => bytes,
    // As the Node adapter gives a small body, which comes with its headers: without a wait.
    arrivedBody: () => bytes,
    origin: 'http://127.0.0.1:8787',
  };
  const context = (): CallContext => ({
    request,
    runtime,
    requestId: 'bench',
    note: {},
    at: runtime.clock.now(),
    started: performance.now(),
  });
  const router = routerFromTable(SPEC_ROUTES, (routes) => registerGatewayRoutes(routes, runtime));
  const ctx = context();
  const identity = await identify(runtime, ctx);
  const body = parseJsonBody(bytes, search.schema) as { query: string; count: number };
  const result = (runTool(runtime, search, body) as SerialisedAnswer).text;

  const timed: Timed[] = [
    ['request id (a UUID)', () => requestIdFor(undefined)],
    ['route (path, table)', () => router.match('POST', routingPath(request.path))],
    ['identify (token, memoised signature)', () => identify(runtime, context())],
    ['authorize (tiers, allowlist)', () => authorize(runtime, ctx, identity, search)],
    [
      'read body (JSON, schema, fingerprint)',
      () => {
        parseJsonBody(bytes, search.schema);
        return journalFingerprint(search.tool, bytes);
      },
    ],
    ['secret scan of the query', () => noteOutgoingText(ctx, identity, 'query', body.query)],
    // Part of the read-body stage: the journal's key of the request's meaning (the client report's retries).
    ["request key (the query's meaning)", () => requestKey(search.meaning, body)],
    [
      'admit (concurrency, rate limit, headers)',
      // In memory the stage answers without a promise.
      () => (admit(runtime, context(), identity, 'web.search') as Admission).release(),
    ],
    ['idempotency key (none sent)', () => idempotencyKey(runtime, ctx, identity, search, bytes, NO_STORE)],
    ['inject fault (none armed)', () => injectFault(runtime, ctx, 'web.search', identity.agentId)],
    ['run tool (search; an answer given before: serialised once)', () => runTool(runtime, search, body)],
    ['respond (headers)', () => respondJsonText(ctx, result, 200, NO_STORE)],
    [
      'record (journal entry)',
      () => {
        const c = context();
        c.note.operation = 'web.search';
        recordCall(runtime, c, 200, c.started, c.started);
      },
    ],
  ];
  const whole: Timed = [
    'whole core',
    async () => {
      const answer = await gateway.core.handle(request);
      answer.record(performance.now());
    },
  ];
  const batches = await timeInterleaved([...timed, whole]);
  const stages: [string, number][] = timed.map(([name], k) => [name, median(batches[k] ?? [])]);
  const sum = stages.reduce((total, [, us]) => total + us, 0);
  const wholeBatches = batches[timed.length] ?? [];
  const core = median(wholeBatches);
  // Round by round: the core's batch over the sum of the stages' batches of the same round.
  const overSum = wholeBatches.map((us, b) => us / timed.reduce((t, _, k) => t + (batches[k]?.[b] ?? 0), 0));
  const ratio = { median: median(overSum), min: Math.min(...overSum), max: Math.max(...overSum) };
  const reportMs = reportOverJournal(100_000, gateway);

  if (options.json) {
    process.stdout.write(
      `${JSON.stringify({ stages: Object.fromEntries(stages), sum, core, core_over_sum: ratio, report_100k_ms: reportMs }, null, 2)}\n`,
    );
    return;
  }
  const lines = [
    `Cost per stage of an authenticated POST /v1/web/search, in process (median of ${BATCHES} interleaved batches of ${BATCH} calls):`,
    '',
    `${'stage'.padEnd(42)} ${'µs/call'.padStart(8)}`,
    ...stages.map(([name, us]) => `${name.padEnd(42)} ${us.toFixed(2).padStart(8)}`),
    `${'sum of the stages'.padEnd(42)} ${sum.toFixed(2).padStart(8)}`,
    `${'whole core (core.handle + record, awaited)'.padEnd(42)} ${core.toFixed(2).padStart(8)}`,
    `whole core / sum of the stages, per round: ${ratio.median.toFixed(2)} (rounds ${ratio.min.toFixed(2)}-${ratio.max.toFixed(2)}); target <= 1.3: ${ratio.median <= 1.3 ? 'met' : 'NOT met'}`,
    '',
    'node:http and the adapter add the rest: compare with `CPU µs/req` of `npm run bench` (the server process,',
    'everything included) and of the bare like-for-like server (node:http, JSON, headers: the unavoidable part).',
    '',
    `Client report over a 100,000-entry journal (one agent): ${reportMs.toFixed(0)} ms`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
