// The benchmark's baselines: bare node:http servers answering POST /v1/web/search with what a JSON API can
// least do per request. Usage: node bench-bare-server.mjs <like-for-like|precomputed> <sample.json>
//   like-for-like: read the body, JSON.parse it, JSON.stringify the sample answer (same size and shape as
//                  the gateway's) per request, with the gateway's headers (request id, Date, cache-control,
//                  RateLimit fields, content-length): the work any gateway must do.
//   precomputed:   read and parse the body, write a fixed answer of the same size (the old baseline).
// It prints its URL, then serves until SIGTERM.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const mode = process.argv[2] ?? 'like-for-like';
const sample = JSON.parse(readFileSync(process.argv[3] ?? '', 'utf8'));
const precomputed = JSON.stringify(sample);

let dateSecond = 0;
let dateText = '';
const httpDate = () => {
  const now = Date.now();
  if (Math.floor(now / 1000) !== dateSecond) {
    dateSecond = Math.floor(now / 1000);
    dateText = new Date(dateSecond * 1000).toUTCString();
  }
  return dateText;
};

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString() || '{}');
    } catch {
      res.writeHead(400).end();
      return;
    }
    const body = mode === 'precomputed' ? precomputed : JSON.stringify(sample);
    res.writeHead(200, {
      'content-type': 'application/json',
      'x-request-id': randomUUID(),
      date: httpDate(),
      'cache-control': 'no-store',
      'ratelimit-policy': '"per-agent";q=1000000000;w=1',
      ratelimit: '"per-agent";r=999999999;t=1',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () =>
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
