import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * hono (through @hono/node-server) serves foreign fetch handlers only: the gateway's own path must not load
 * it. A fresh Node process, in which resolving `hono` or `@hono/...` throws (a module resolve hook), imports
 * the package's entry, serves the gateway and calls it; then serves a foreign fetch handler, which must need
 * hono (the hook is seen to bite, so the first half cannot pass for want of a working hook).
 */
const here = dirname(fileURLToPath(import.meta.url));
const entry = pathToFileURL(resolve(here, '../index.ts')).href;

const HOOKS = `export async function resolve(specifier, context, next) {
  if (/^(?:hono(?:\\/|$)|@hono\\/)/.test(specifier)) throw new Error('hono was loaded: ' + specifier);
  return next(specifier, context);
}`;
const REGISTER = `import { register } from 'node:module';
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

const CHILD = `
const { createGateway, serve } = await import(${JSON.stringify(entry)});
const out = {};
const server = await serve(createGateway(), { port: 0 });
out.gateway = (await fetch(server.url + '/v1/health')).status;
await server.close();
try {
  const foreign = await serve({ fetch: async () => new Response('ok') }, { port: 0 });
  out.foreign = 'served';
  await foreign.close();
} catch (error) {
  out.foreign = String(error.message);
}
console.log(JSON.stringify(out));
`;

describe('what serving loads', () => {
  it('serving the gateway does not load hono; serving a foreign fetch handler does', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        '--import',
        `data:text/javascript,${encodeURIComponent(REGISTER)}`,
        '--input-type=module',
        '-e',
        CHILD,
      ],
      { cwd: resolve(here, '../..'), timeout: 60_000 },
    );
    const out = JSON.parse(stdout.trim().split('\n').at(-1) as string);
    expect(out.gateway).toBe(200);
    expect(out.foreign).toMatch(/^hono was loaded: @hono\/node-server/);
  }, 90_000);
});
