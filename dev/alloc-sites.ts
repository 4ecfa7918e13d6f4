/**
 * `npx tsx dev/alloc-sites.ts [--rate 2500] [--seconds 5] [--top 40]`: where a request's bytes are
 * allocated. The built gateway (`npm run build`; fixtures/config/bench.yaml) serves over node:http in this
 * process under V8's sampling heap profiler (objects the collector already freed included), a child process
 * sends authenticated searches at a fixed rate (`dev/bench-load.ts`), and the bytes sampled are printed per
 * answered request: the total, the share under the gateway's own frames (the nearest frame of dist/ a
 * sample was taken under: node:http's work for the gateway's calls included), the event loop's stall
 * records (`loop-stall`: they grow with the machine's load, the rest does not), and the top allocation
 * sites by both. Sampled every 512 bytes: compare figures from the same settings. `npm run bench` prints
 * the totals from outside (the collector's own counts); this says where they come from.
 */
import { spawn } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { Command } from 'commander';
import { intOption } from '../cli/cli-options.ts';
import { pacedLoad } from './bench-load.ts';
import { QUERIES } from './bench-rounds.ts';
import { BENCH_CONFIG } from './bench-targets.ts';
import { BUILT_CLI_ENTRY } from './spawn-serve.ts';

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/** The child: paced load on `url` with `token`, its result as JSON on stdout. */
async function sendLoad(url: string, token: string, rate: number, seconds: number) {
  const { hostname, port } = new URL(url);
  const result = await pacedLoad({
    url,
    rate,
    seconds,
    connections: 20,
    request: (n) => {
      const body = JSON.stringify({ query: QUERIES[n % QUERIES.length], count: 5 });
      return Buffer.from(
        `POST /v1/web/search HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\nx-agent-identity: ${token}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    },
  });
  process.stdout.write(JSON.stringify(result));
}

/** Load from a child process (its allocations are not this process's), answered requests counted. */
function loadFromChild(url: string, token: string, rate: number, seconds: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...process.execArgv, process.argv[1] as string, '--load', url, token, String(rate), String(seconds)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once('exit', (code) =>
      code === 0
        ? resolve((JSON.parse(out) as { answered: number }).answered)
        : reject(new Error(`load exited ${code}`)),
    );
  });
}

const perRequest = (bytes: number, answered: number) => (bytes / answered).toFixed(0).padStart(7);

async function main() {
  const options = new Command('alloc-sites')
    .option('--rate <n>', 'requests per second', intOption(1, 20_000), 2500)
    .option('--seconds <n>', 'measured seconds', intOption(1, 60), 5)
    .option('--top <n>', 'sites listed', intOption(0, 1000), 40)
    .parse()
    .opts<{ rate: number; seconds: number; top: number }>();
  const load = loadavg()[0] as number;
  const dist = dirname(dirname(BUILT_CLI_ENTRY));
  const { createGateway, serve } = (await import(
    join(dist, 'mock-server', 'index.js')
  )) as typeof import('../mock-server/index.ts');
  const gateway = createGateway({ configFile: BENCH_CONFIG, log: () => {} });
  const server = await serve(gateway, { port: 0, log: () => {} });
  const token = gateway.mintToken('agent-verified');
  const session = new Session();
  try {
    await loadFromChild(server.url, token, options.rate, 3);
    session.connect();
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 512,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    const answered = await loadFromChild(server.url, token, options.rate, options.seconds);
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: HeapNode } };
    const bySite = new Map<string, number>();
    const byOwn = new Map<string, number>();
    let total = 0;
    const walk = (node: HeapNode, own: string | undefined) => {
      const frame = node.callFrame;
      const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/.*\/dist\//, '')}:${frame.lineNumber + 1}`;
      const mine = frame.url.includes('/dist/') ? name : own;
      total += node.selfSize;
      if (node.selfSize > 0) {
        bySite.set(name, (bySite.get(name) ?? 0) + node.selfSize);
        const key = mine ?? '(no gateway frame: node:http and the event loop)';
        byOwn.set(key, (byOwn.get(key) ?? 0) + node.selfSize);
      }
      for (const child of node.children) walk(child, mine);
    };
    walk(profile.head, undefined);
    let gatewayBytes = 0;
    let stalls = 0;
    for (const [site, bytes] of byOwn)
      if (site.includes('loop-stall')) stalls += bytes;
      else if (site.includes('mock-server/')) gatewayBytes += bytes;
    const lines = [
      `${answered} requests answered at ${options.rate} req/s (load average ${load.toFixed(2)} before the run, ${process.version}), bytes allocated per request (sampled):`,
      `  total ${perRequest(total, answered)}`,
      `  under gateway frames ${perRequest(gatewayBytes, answered)}`,
      `  stall records ${perRequest(stalls, answered)} (grow with the machine's load)`,
      `  elsewhere ${perRequest(total - gatewayBytes - stalls, answered)}`,
    ];
    const top = (map: Map<string, number>) =>
      [...map]
        .sort((a, b) => b[1] - a[1])
        .slice(0, options.top)
        .map(([site, bytes]) => `${perRequest(bytes, answered)}  ${site}`);
    if (options.top > 0)
      lines.push(
        '',
        'By the nearest gateway frame:',
        ...top(byOwn),
        '',
        'By allocating frame (an optimised frame counts what it inlined):',
        ...top(bySite),
      );
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    session.disconnect();
    await server.close();
  }
}

if (process.argv[2] === '--load') {
  const [url, token, rate, seconds] = process.argv.slice(3);
  await sendLoad(url as string, token as string, Number(rate), Number(seconds));
} else await main();
