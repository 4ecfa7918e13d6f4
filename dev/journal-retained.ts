/**
 * `npx tsx --expose-gc dev/journal-retained.ts`: how many bytes of the collector's heap one journal entry
 * keeps, as the gateway records it over HTTP (node:http adapter, the bench's search request), and how many
 * bytes outside it (buffers). The gateway is served in this process with journal capacity N, sent N
 * requests over loopback, then the heap is measured after full collections; again with capacity 1; the
 * difference over N is what one entry holds until it is read or overwritten. The figure is what every
 * young-generation collection of a gateway at a steady rate copies or traces per entry it still holds
 * (issue 35), and does not depend on the machine's speed (only on Node's version and the request's shape).
 *
 * Usage: npx tsx --expose-gc dev/journal-retained.ts [--entries 2000] [--body-bytes 2048] [--json]
 */
import { request } from 'node:http';
import { Command } from 'commander';
import { intOption } from '../cli/cli-options.ts';
import { serve } from '../mock-server/adapters/node-server.ts';
import { createGateway } from '../mock-server/gateway.ts';

const program = new Command('journal-retained')
  .description('bytes one journal entry keeps on the heap and off it, over HTTP')
  .option('--entries <n>', 'requests recorded (the journal holds them all)', intOption(100, 1_000_000), 2000)
  .option('--body-bytes <n>', 'journal.body_bytes (0: no exchange kept)', intOption(0, 1_048_576), 2048)
  .option('--json', 'print the figures as JSON')
  .parse();
const options = program.opts<{ entries: number; bodyBytes: number; json?: boolean }>();

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  process.stderr.write('run with --expose-gc: npx tsx --expose-gc dev/journal-retained.ts\n');
  process.exit(2);
}

function post(port: number, token: string, body: string, agent: import('node:http').Agent) {
  return new Promise<void>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/web/search',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'x-agent-identity': token },
      },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Heap and buffer bytes in use with a journal of `capacity` after `count` requests, fully collected. */
async function measure(capacity: number, count: number) {
  const gateway = createGateway({
    config: {
      journal: { capacity, body_bytes: options.bodyBytes },
      rate_limits: {
        rules: [{ name: 'open', scope: 'agent', algorithm: 'token_bucket', limit: 1e9, window_seconds: 1 }],
        concurrency: { per_agent: 100000 },
      },
    },
    log: () => {},
  });
  const server = await serve(gateway, { port: 0, log: () => {} });
  const port = Number(new URL(server.url).port);
  const token = gateway.mintToken('agent-verified');
  const { Agent } = await import('node:http');
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  for (let i = 0; i < count; i += 4)
    await Promise.all(
      [0, 1, 2, 3].map((k) =>
        post(port, token, JSON.stringify({ query: `benchmark query ${(i + k) % 64}`, count: 5 }), agent),
      ),
    );
  for (let k = 0; k < 4; k++) gc?.();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  agent.destroy();
  await server.close();
  return { heapUsed, arrayBuffers };
}

// A first run warms the code (compiled functions, caches), so that both measured runs find it alike.
await measure(1, 200);
const held = await measure(options.entries, options.entries);
const none = await measure(1, options.entries);
const perEntry = {
  heap: (held.heapUsed - none.heapUsed) / options.entries,
  buffers: (held.arrayBuffers - none.arrayBuffers) / options.entries,
};
if (options.json) process.stdout.write(`${JSON.stringify({ ...options, perEntry })}\n`);
else
  process.stdout.write(
    `${options.entries} entries over HTTP (journal.body_bytes ${options.bodyBytes}), Node ${process.version}: ` +
      `${Math.round(perEntry.heap)} bytes of heap and ${Math.round(perEntry.buffers)} bytes of buffers per entry\n`,
  );
