// The benchmark's baseline: a bare node:http server doing the least a JSON API can do per request
// (read the body, parse it, answer a fixed JSON body of the given size). It prints its port, then serves.
import { createServer } from 'node:http';

const responseBytes = Number(process.argv[2] ?? 1024);
const payload = JSON.stringify({ results: 'x'.repeat(Math.max(0, responseBytes - 16)) });

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
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
    res.end(payload);
  });
});
server.listen(0, '127.0.0.1', () =>
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
