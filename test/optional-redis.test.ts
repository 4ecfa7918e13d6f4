import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Runs a module script in a fresh Node (the sources through tsx) and answers whether ioredis was loaded by
 * then: ioredis is CommonJS, so once imported it is in the CommonJS module cache.
 */
function ioredisLoadedAfter(script: string): Promise<string> {
  const probe = `${script}
const { createRequire } = await import('node:module');
const cache = Object.keys(createRequire(import.meta.url).cache);
console.log(cache.some((file) => file.includes('/node_modules/ioredis/')) ? 'ioredis loaded' : 'ioredis not loaded');`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', probe],
      { cwd: ROOT, timeout: 60_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout.trim()),
    );
  });
}

describe('Redis support is loaded only when a Redis store is asked for', () => {
  it('a gateway on the memory store, served and closed, never loads ioredis', async () => {
    const script = `
const { createGateway, serve } = await import('./mock-server/index.ts');
const server = await serve(createGateway({ log: () => {} }), { port: 0 });
await server.close();`;
    expect(await ioredisLoadedAfter(script)).toBe('ioredis not loaded');
  });

  it('asking for a Redis store loads it (the probe sees it), even when the store cannot be reached', async () => {
    const script = `
const { connectRedis } = await import('./mock-server/store/redis-connection.ts');
await connectRedis({ url: 'redis://127.0.0.1:1', keyPrefix: 'agw', timeoutMs: 1000, log: () => {} }).catch(() => {});`;
    expect(await ioredisLoadedAfter(script)).toBe('ioredis loaded');
  });
});
