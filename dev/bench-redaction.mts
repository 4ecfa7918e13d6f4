/**
 * What redacting the journal's exchanges costs when they are first read: 1,000 search exchanges (a 5.8 KB
 * answer, 9 request headers, a 2 KiB journal) through `redactExchange` with the gateway's secret scanner,
 * median of 7 rounds. Give another checkout's root to compare two versions side by side on one machine:
 *
 *   npx tsx dev/bench-redaction.mts [repository root]
 *
 * Prints figures only; not a test (a loaded machine's times say nothing alone).
 */
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));
const { redactExchange } = await import(`${root}/mock-server/journal/exchange-capture.ts`);
const { createGateway } = await import(`${root}/mock-server/gateway.ts`);
const gateway = createGateway({ log: () => {} });
const scan = (text: string): string =>
  gateway.runtime.scanSecrets(text, { token: 'agt1.abc.def', agentId: 'agent-verified' }).redacted;

const results = Array.from({ length: 10 }, (_, i) => ({
  title: `Result ${i} about agent tool gateways`,
  url: `https://example.com/page/${i}?ref=search&session_id=s${i}`,
  snippet: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(8),
}));
const responseBody = JSON.stringify({ query: 'agent tool gateway', results });
const requestBody = JSON.stringify({ query: 'agent tool gateway rate limits', max_results: 10 });
const requestHeaders = [
  ['Host', '127.0.0.1:8788'],
  ['User-Agent', 'my-agent/1.0 (node)'],
  ['Accept', 'application/json'],
  ['Content-Type', 'application/json'],
  ['X-Agent-Identity', `agt1.eyJhZ2VudCI6ImEifQ.${'x'.repeat(43)}`],
  ['Idempotency-Key', '3f1c2b9a-5d6e-4f70-8a9b-0c1d2e3f4a5b'],
  ['Content-Length', String(requestBody.length)],
  ['Connection', 'keep-alive'],
  ['Accept-Encoding', 'gzip, deflate'],
].flat();
const responseHeaders = [
  ['content-type', 'application/json; charset=utf-8'],
  ['x-request-id', '9e0f1a2b-3c4d-5e6f-7a8b-9c0d1e2f3a4b'],
  ['ratelimit', 'limit=60, remaining=59, reset=60'],
  ['content-length', String(responseBody.length)],
  ['date', new Date().toUTCString()],
].flat();
const KEEP = 2048;
// As much as the capture takes: 1 KiB past the kept bytes where the version knows it, else the kept bytes.
const capture = await import(`${root}/mock-server/journal/exchange-capture.ts`);
const taken = typeof capture.capturedBytes === 'function' ? capture.capturedBytes(KEEP) : KEEP;
const pieces = () => ({
  requestHeaders,
  query: 'debug=1',
  requestBody,
  requestBodyBytes: requestBody.length,
  responseHeaders,
  responseBody: responseBody.slice(0, taken),
  responseBodyBytes: responseBody.length,
  httpVersion: '1.1',
});

const rounds: number[] = [];
for (let round = 0; round < 7; round++) {
  const list = Array.from({ length: 1000 }, pieces);
  const started = performance.now();
  for (const p of list) redactExchange(p, KEEP, scan);
  rounds.push(performance.now() - started);
}
rounds.sort((a, b) => a - b);
const ms = (n: number | undefined) => (n ?? 0).toFixed(1);
process.stdout.write(
  `${root}: 1,000 exchanges redacted in ${ms(rounds[3])} ms (median of 7; min ${ms(rounds[0])}, max ${ms(rounds[6])}); ${taken} bytes of a ${responseBody.length}-byte answer taken; load average ${loadavg()[0]?.toFixed(1)}\n`,
);
process.exit(0);
