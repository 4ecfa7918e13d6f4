/**
 * `npx tsx dev/journal-gc.ts`: what a journal of a million entries costs the garbage collector, in the
 * object form the journal had until wave 4's fourth session (one `JournalEntry` object per request, with its
 * strings, arrays and the exchange's pieces), in the journal's own form since (`record`: the same entry and
 * exchange written as a record of bytes by `journal/record-ring.ts`), and in sketches (`flat`, `line`,
 * `compact`: the raw facts in typed-array columns, the request's kept bytes in a shared byte arena). Each form runs in its own `node --trace-gc` process: it fills
 * a ring of `--entries` entries, then records `--steady` more (the ring overwriting its oldest), with the
 * short-lived garbage a request leaves, and the collector's pauses of the steady phase are summarised (the
 * young generation's scavenges, and the mark-compacts), with the heap in use once the ring is full.
 *
 * Usage: npx tsx dev/journal-gc.ts [--entries 1000000] [--steady 300000] [--json]
 * It measures the representation only (no gateway, no HTTP): the figures are the collector's work for each
 * form on this machine, whatever the request path costs.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { intOption } from '../cli/cli-options.ts';
import type { JournalEntry } from '../mock-server/journal/journal-entry.ts';
import { CapturedExchange } from '../mock-server/journal/packed-exchange.ts';
import { createRing } from '../mock-server/journal/record-ring.ts';
import { type CompactJournal, createCompactJournal, flatEntry, lineEntry } from './journal-gc-forms.ts';

const SELF = fileURLToPath(import.meta.url);

/** A request's bytes as the gateway reads them (the identity header, a small JSON body). */
const HEADERS = [
  'host',
  '127.0.0.1:8080',
  'content-type',
  'application/json',
  'x-agent-identity',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudC0xIn0.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU',
  'content-length',
  '52',
];

/** The answer's text (about 1.5 KB, as the search answers), and what else a request leaves: dropped at once. */
function requestGarbage(n: number): string {
  JSON.parse(`{"query":"benchmark query ${n % 64} about agent tools","count":5}`);
  return JSON.stringify({
    query: `benchmark query ${n % 64} about agent tools`,
    results: Array.from({ length: 5 }, (_, i) => ({
      title: `Result ${i} for benchmark query ${n % 64}`,
      url: `https://example.org/agent-tools/${n % 64}/${i}`,
      snippet:
        'A deterministic snippet of about two hundred characters, as the fixture corpus has them, '.repeat(2),
      rank: i + 1,
    })),
  });
}

/** Today's form: the entry as recordCall builds it, with the exchange pieces deferred to the first read. */
function objectEntry(n: number, bodyBytes: Buffer, answer: string, keep: number) {
  const headers = [...HEADERS];
  const answerHeaders = {
    'content-type': 'application/json',
    'x-request-id': randomUUID(),
    date: new Date(1_764_000_000_000 + n).toUTCString(),
    'cache-control': 'no-store',
    'ratelimit-policy': '"per-agent";q=1000000000;w=1',
    ratelimit: `"per-agent";r=${999_999_999 - n};t=1`,
    'content-length': String(answer.length),
  };
  const entry = {
    seq: n,
    time: '',
    request_id: answerHeaders['x-request-id'],
    at: 1_764_000_000_000 + n,
    duration_ms: Math.round(Math.random() * 10_000) / 100,
    real_ms: Math.round(n * 40 + Math.random() * 100) / 100,
    written_ms: Math.round(n * 40 + 100) / 100,
    connection: n % 2000,
    connection_opened_ms: 12.34,
    connection_seq: Math.floor(n / 2000),
    method: 'POST',
    path: '/v1/web/search',
    operation: 'web.search',
    status: 200,
    agent: 'agent-1',
    token: 'fp_6b1c0d2e9f',
    in_flight: 1,
    request_fingerprint: `sha-${(n % 64).toString(16).padStart(40, '0')}`,
    request_key: `key-${(n % 64).toString(16).padStart(40, '0')}`,
    quota: [{ rule: 'per-agent', key: 'agent-1', limit: 1_000_000_000, remaining: 999_999_999 - n }],
    query: `benchmark query ${n % 64} about agent tools`,
  };
  const body = bodyBytes.subarray(0, bodyBytes.length);
  const answerStart = answer.length <= keep ? answer : answer.slice(0, keep);
  const exchange = () => ({ headers, body, answerHeaders, answerStart });
  return { entry, exchange };
}

type Form = 'object' | 'flat' | 'line' | 'compact' | 'record';
const FORMS: Form[] = ['object', 'flat', 'line', 'compact', 'record'];

// One scan for every call, as the gateway's (the secrets known at the call, the same until they change).
const scan = (text: string) => ({ redacted: text });

/** The journal's own form (journal/record-ring.ts): the same entry and exchange, written as a record of bytes. */
function recordInto(
  ring: ReturnType<typeof createRing>,
  n: number,
  bytes: Buffer,
  answer: string,
  keep: number,
) {
  const { entry, exchange } = objectEntry(n, bytes, answer, keep);
  const { answerHeaders, answerStart } = exchange();
  const pieces = {
    requestHeaders: HEADERS,
    requestBody: bytes,
    requestBodyBytes: bytes.length,
    responseHeaders: Object.entries(answerHeaders).flat(),
    responseBody: answerStart,
    responseBodyBytes: Buffer.byteLength(answer),
  };
  ring.push(entry as unknown as JournalEntry, {
    exchange: new CapturedExchange(pieces, keep, scan, { token: HEADERS[5], agentId: 'agent-1' }),
  });
}

function child(form: Form, entries: number, steady: number, keep: number) {
  const bodyOf = (n: number) =>
    Buffer.from(`{"query":"benchmark query ${n % 64} about agent tools","count":5}`);
  const ring: unknown[] = new Array(entries);
  const compact: CompactJournal | undefined =
    form === 'compact' ? createCompactJournal(entries, 192 + keep) : undefined;
  const records = form === 'record' ? createRing(entries) : undefined;
  let sink = 0;
  const record = (n: number) => {
    const answer = requestGarbage(n);
    sink += answer.length;
    const bytes = bodyOf(n);
    if (compact) compact.record(n, bytes, HEADERS, answer, keep);
    else if (records) recordInto(records, n, bytes, answer, keep);
    else if (form === 'object') ring[n % entries] = objectEntry(n, bytes, answer, keep);
    else {
      const kept = Buffer.concat([
        Buffer.from(HEADERS.join('\n'), 'latin1'),
        bytes,
        Buffer.from(answer.length <= keep ? answer : answer.slice(0, keep)),
      ]);
      ring[n % entries] =
        form === 'flat' ? flatEntry(n, randomUUID(), kept) : lineEntry(n, randomUUID(), kept);
    }
  };
  process.stdout.write('@fill\n');
  for (let n = 0; n < entries; n++) record(n);
  (globalThis as { gc?: () => void }).gc?.();
  const heapMb = process.memoryUsage().heapUsed / 1024 / 1024;
  const external = process.memoryUsage().arrayBuffers / 1024 / 1024;
  process.stdout.write(`@full ${heapMb.toFixed(1)} ${external.toFixed(1)}\n@steady\n`);
  const started = performance.now();
  for (let n = entries; n < entries + steady; n++) record(n);
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`@done ${seconds.toFixed(3)} ${sink % 7}\n`);
}

interface Pauses {
  count: number;
  totalMs: number;
  p50: number;
  p99: number;
  max: number;
}

const summary = (ms: number[]): Pauses => {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
  return {
    count: ms.length,
    totalMs: ms.reduce((a, b) => a + b, 0),
    p50: at(0.5),
    p99: at(0.99),
    max: sorted.at(-1) ?? 0,
  };
};

/** Runs one form in its own `--trace-gc` process and reads its pauses of the steady phase. */
function measure(form: Form, entries: number, steady: number, keep: number) {
  const run = spawnSync(
    process.execPath,
    [
      '--trace-gc',
      '--expose-gc',
      '--max-old-space-size=8192',
      '--import',
      'tsx',
      SELF,
      '--child',
      form,
      '--entries',
      String(entries),
      '--steady',
      String(steady),
      '--body-bytes',
      String(keep),
    ],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  if (run.status !== 0) throw new Error(`the ${form} run failed:\n${run.stderr}`);
  const lines = run.stdout.split('\n');
  const full = lines.find((l) => l.startsWith('@full'))?.split(' ') ?? [];
  const done = lines.find((l) => l.startsWith('@done'))?.split(' ') ?? [];
  const steadyAt = lines.indexOf('@steady');
  const scavenges: number[] = [];
  const majors: number[] = [];
  for (const line of lines.slice(steadyAt)) {
    // e.g. "[123:0x55]   1234 ms: Scavenge 45.2 (60.1) -> 40.1 (62.1) MB, 3.45 / 0.00 ms  (...)"
    const match =
      /ms: (Scavenge|Mark-Compact|Mark-sweep)[^,]*MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/.exec(
        line,
      );
    if (!match) continue;
    (match[1] === 'Scavenge' ? scavenges : majors).push(Number(match[2]));
  }
  return {
    form,
    heapMb: Number(full[1]),
    arrayBuffersMb: Number(full[2]),
    steadySeconds: Number(done[1]),
    scavenge: summary(scavenges),
    markCompact: summary(majors),
  };
}

const options = new Command()
  .name('bench:journal-gc')
  .option('--entries <n>', 'entries the ring holds', intOption(1000, 10_000_000), 1_000_000)
  .option('--steady <n>', 'entries recorded once it is full', intOption(1000, 10_000_000), 300_000)
  .option(
    '--body-bytes <n>',
    "bytes of the answer's body kept (journal.body_bytes)",
    intOption(0, 1_048_576),
    2048,
  )
  .option('--child <form>', '(internal) run one form')
  .option('--forms <list>', `forms to measure, of ${FORMS.join(',')}`, FORMS.join(','))
  .option('--json', 'print the figures as JSON')
  .parse()
  .opts<{
    entries: number;
    steady: number;
    bodyBytes: number;
    child?: Form;
    forms: string;
    json?: boolean;
  }>();

if (options.child) child(options.child, options.entries, options.steady, options.bodyBytes);
else {
  const load = () => (loadavg()[0] as number).toFixed(2);
  const loadBefore = load();
  const forms = options.forms.split(',').filter((f): f is Form => FORMS.includes(f as Form));
  const results = forms.map((form) => measure(form, options.entries, options.steady, options.bodyBytes));
  const loadAfter = load();
  if (options.json) process.stdout.write(`${JSON.stringify({ loadBefore, loadAfter, results }, null, 2)}\n`);
  else {
    const ms = (n: number) => n.toFixed(2).padStart(7);
    const rows = results.map(
      (r) =>
        `${r.form.padEnd(8)} ${r.heapMb.toFixed(0).padStart(8)} ${r.arrayBuffersMb.toFixed(0).padStart(8)} ${r.steadySeconds.toFixed(2).padStart(8)}` +
        ` ${String(r.scavenge.count).padStart(6)} ${ms(r.scavenge.totalMs)} ${ms(r.scavenge.p50)} ${ms(r.scavenge.p99)} ${ms(r.scavenge.max)}` +
        ` ${String(r.markCompact.count).padStart(4)} ${ms(r.markCompact.max)}`,
    );
    process.stdout.write(
      [
        `${options.entries} entries (answers' first ${options.bodyBytes} bytes kept), then ${options.steady} more recorded (ring full); 1-minute load average ${loadBefore} before, ${loadAfter} after${Math.max(Number(loadBefore), Number(loadAfter)) >= 1 ? ' (LOADED: compare the forms, not the absolute figures)' : ''}`,
        `form     heap MB  bufs MB  steady s  scav.  scav.ms  p50 ms  p99 ms  max ms  m-c  max ms`,
        ...rows,
        '',
      ].join('\n'),
    );
  }
}
