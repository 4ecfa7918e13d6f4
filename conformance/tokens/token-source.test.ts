import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandToken } from './token-source.ts';

describe('commandToken', () => {
  it('runs the command again on a refresh 2 s after the last one, on the clock it is given (not before)', async () => {
    let now = 1_000_000;
    // Each run of the command prints the next number: which run a token came from.
    const count = join(mkdtempSync(join(tmpdir(), 'token-source-')), 'runs');
    const script = `const f=require('node:fs');const n=(f.existsSync(process.argv[1])?+f.readFileSync(process.argv[1],'utf8'):0)+1;f.writeFileSync(process.argv[1],String(n));console.log('token-'+n)`;
    const source = commandToken(`node -e "${script}" '${count}'`, '$TOKEN', { now: () => now });
    expect(await source.current()).toBe('token-1');
    expect(await source.refresh()).toBe('token-2');
    now += 1999;
    expect(await source.refresh()).toBe('token-2');
    now += 1;
    expect(await source.refresh()).toBe('token-3');
  });
});
