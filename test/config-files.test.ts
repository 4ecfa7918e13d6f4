import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENTRY } from '../dev/spawn-serve.ts';
import { ConfigError, MAX_CONFIG_FILE_BYTES, readYamlFile } from '../mock-server/config/load-config.ts';

/** A billion laughs: each level doubles nine times over; expanded it would not fit in memory. */
const ALIAS_BOMB = [
  'a: &a ["x","x","x","x","x","x","x","x","x"]',
  ...Array.from({ length: 8 }, (_, i) => {
    const [from, to] = [String.fromCharCode(97 + i), String.fromCharCode(98 + i)];
    return `${to}: &${to} [${Array(9).fill(`*${from}`).join(',')}]`;
  }),
  'agents: *i',
].join('\n');

let dir: string;
const files: Record<string, string> = {};
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agw-config-files-'));
  const at = (name: string) => join(dir, name);
  writeFileSync(at('bomb.yaml'), ALIAS_BOMB);
  writeFileSync(at('broken.yaml'), 'agents: [\n  - id: x\n');
  writeFileSync(at('huge.yaml'), `# ${' '.repeat(MAX_CONFIG_FILE_BYTES)}\n`);
  mkdirSync(at('a-directory'));
  const fifo = spawnSync('mkfifo', [at('fifo')]);
  Object.assign(files, {
    'an alias bomb': at('bomb.yaml'),
    'a syntax error': at('broken.yaml'),
    'a file over the size cap': at('huge.yaml'),
    'a directory': at('a-directory'),
    'an endless device (/dev/zero)': '/dev/zero',
    'a random device (/dev/urandom)': '/dev/urandom',
    ...(fifo.status === 0 ? { 'a FIFO nobody writes to': at('fifo') } : {}),
  });
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('config and scenario files: only regular files under a size cap, every YAML error one clean message', () => {
  it('readYamlFile: a ConfigError naming the file and why, for every kind of bad file', () => {
    for (const [what, file] of Object.entries(files)) {
      let error: unknown;
      try {
        readYamlFile(file);
      } catch (caught) {
        error = caught;
      }
      expect(error, what).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).file, what).toBe(file);
    }
    expect(() => readYamlFile(files['an alias bomb'] as string)).toThrow(/not valid YAML: .*alias/i);
    expect(() => readYamlFile('/dev/zero')).toThrow(/not a regular file/);
    expect(() => readYamlFile(files['a file over the size cap'] as string)).toThrow(
      /larger than 1048576 bytes/,
    );
  });

  it('a few aliases, as a real config uses them, still work', () => {
    const file = join(dir, 'aliases.yaml');
    writeFileSync(file, 'x: &tools [web.search]\ny: *tools\nz: *tools\n');
    expect(readYamlFile(file)).toEqual({ x: ['web.search'], y: ['web.search'], z: ['web.search'] });
  });

  for (const flag of ['--config', '--scenario'])
    it(`serve ${flag} <bad file>: exit 2, one line saying what is wrong, no stack trace, no hang`, () => {
      // Every kind through --config; the same reader serves --scenario, so its worst three there.
      const worst = ['an alias bomb', 'an endless device (/dev/zero)', 'a FIFO nobody writes to'];
      const cases = Object.entries(files).filter(([what]) => flag === '--config' || worst.includes(what));
      for (const [what, file] of cases) {
        const run = spawnSync(process.execPath, [CLI_ENTRY, 'serve', '--port', '0', flag, file], {
          encoding: 'utf8',
          timeout: 60_000,
          env: { ...process.env, AGENT_GATEWAY_STORE: '' },
        });
        expect(run.status, `${what}: ${run.stderr}`).toBe(2);
        expect(run.stderr, what).toMatch(/^agent-gateway: Invalid (config|scenario) /);
        expect(run.stderr, what).not.toMatch(/\n\s+at /);
      }
    }, 240_000);
});
