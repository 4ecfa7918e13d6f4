import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installedVersions, upstreamNamed } from './consumers/scratch-tools.ts';

// A scratch project as npm leaves it: node_modules/.package-lock.json lists every installed folder.
const dir = mkdtempSync(join(tmpdir(), 'consumer-tools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'node_modules'), { recursive: true });
writeFileSync(
  join(dir, 'node_modules', '.package-lock.json'),
  JSON.stringify({
    packages: {
      'node_modules/ioredis': { version: '6.1.0' },
      'node_modules/redis-errors': { version: '1.2.0' },
      'node_modules/@types/node': { version: '24.19.4' },
      'node_modules/vitest/node_modules/vite': { version: '8.0.1' },
    },
  }),
);

describe('the consumer matrix names what an upstream release broke', () => {
  it('names each installed package a failing output points into, with its version', () => {
    const output = [
      `${dir}/node_modules/ioredis/built/index.d.ts(3,25): error TS7016: Could not find a declaration file for module 'redis-errors'. '${dir}/node_modules/redis-errors/index.js' implicitly has an 'any' type.`,
      `    at ${dir}/node_modules/vitest/node_modules/vite/dist/node/index.js:10:3`,
    ].join('\n');
    expect(upstreamNamed(output, dir)).toBe(
      ' (the output points into installed packages: ioredis@6.1.0 in node_modules/ioredis, redis-errors@1.2.0 in node_modules/redis-errors, vite@8.0.1 in node_modules/vitest/node_modules/vite; an upstream release is suspect when the package is not this one)',
    );
  });

  it('says nothing when the output names no installed file', () => {
    expect(upstreamNamed('agent.test.ts(4,1): error TS2304: Cannot find name x.', dir)).toBe('');
  });

  it('reads the top-level versions of the project', () => {
    expect(Object.fromEntries(installedVersions(dir))).toEqual({
      ioredis: '6.1.0',
      'redis-errors': '1.2.0',
      '@types/node': '24.19.4',
    });
  });
});
