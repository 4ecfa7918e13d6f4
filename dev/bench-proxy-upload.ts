/**
 * `node dev/bench-proxy-upload.ts [MB]`: a large upload through `agent-gateway proxy` (its own process), with
 * and without an admin key (with one, the body streams through the admin key guard:
 * mock-server/proxy/admin-key-guard.ts), to a loopback target that counts and hashes what it gets. Prints,
 * for each body kind (random bytes, base64 text, prose), the time from the first byte sent to the answer,
 * the proxy's peak resident memory (VmHWM) and whether the target got the body byte for byte; and the load.
 * Figures, not assertions: a loaded machine gives larger numbers.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { loadavg } from 'node:os';
import { spawnServe } from './spawn-serve.ts';

const MB = Number(process.argv[2] ?? 50);
const SIZE = MB * 1024 * 1024;
const CHUNK = 64 * 1024;

const target = createServer((req, res) => {
  const hash = createHash('sha256');
  let bytes = 0;
  req.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    bytes += chunk.length;
  });
  req.on('end', () => res.end(JSON.stringify({ bytes, sha256: hash.digest('hex') })));
});
await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
const targetUrl = `http://127.0.0.1:${(target.address() as { port: number }).port}`;

/** The body, made chunk by chunk from a seed chunk (the same bytes each run). */
const KINDS: Record<string, Buffer> = {
  'random bytes': randomBytes(CHUNK),
  'base64 text': Buffer.from(randomBytes((CHUNK / 4) * 3).toString('base64')),
  prose: Buffer.from('the quick brown fox jumps over the lazy dog. '.repeat(CHUNK / 45 + 1).slice(0, CHUNK)),
};

const peakRss = (pid: number) => /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];

function upload(url: string, seed: Buffer) {
  const { port } = new URL(url);
  const hash = createHash('sha256');
  return new Promise<{ ms: number; answer: string; sha256: string }>((resolve, reject) => {
    const started = performance.now();
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(port),
        method: 'POST',
        path: '/upload',
        headers: { 'content-type': 'application/octet-stream' },
      },
      (res) => {
        let answer = '';
        res.on('data', (chunk: Buffer) => {
          answer += chunk.toString();
        });
        res.on('end', () => resolve({ ms: performance.now() - started, answer, sha256: hash.digest('hex') }));
      },
    );
    req.on('error', reject);
    let sent = 0;
    const write = () => {
      while (sent < SIZE) {
        const chunk = seed.subarray(0, Math.min(CHUNK, SIZE - sent));
        hash.update(chunk);
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

console.log(
  `${MB} MB through agent-gateway proxy; load average before: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
for (const [kind, seed] of Object.entries(KINDS))
  for (const guarded of [false, true]) {
    const proxy = await spawnServe(
      ['--target', targetUrl, ...(guarded ? ['--admin-key', 'bench-admin-key-0123456789abcdef'] : [])],
      {
        command: 'proxy',
      },
    );
    const pid = proxy.child.pid as number;
    const before = peakRss(pid);
    const { ms, answer, sha256 } = await upload(proxy.url, seed);
    const after = peakRss(pid);
    await proxy.stop();
    const got = JSON.parse(answer) as { bytes: number; sha256: string };
    console.log(
      `${kind.padEnd(12)} ${guarded ? 'guard (admin key)' : 'no guard        '}  ${(ms / 1000).toFixed(2)} s  ${(MB / (ms / 1000)).toFixed(1)} MB/s  proxy peak RSS ${Math.round(Number(before) / 1024)} -> ${Math.round(Number(after) / 1024)} MB  byte for byte: ${got.bytes === SIZE && got.sha256 === sha256}`,
    );
  }
console.log(
  `load average after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
target.close();
