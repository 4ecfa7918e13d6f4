import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UNOBSERVED_LABEL } from '../reporters/summary-sentence.ts';
import { UNOBSERVED_REMEDY } from './unobserved.ts';

const suite = join(import.meta.dirname, '..');

/** The suite's own sources that may produce a reason: not its declarations, reporters or tests. */
function producers(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'reporters') walk(path);
      } else if (
        entry.name.endsWith('.ts') &&
        !entry.name.endsWith('.test.ts') &&
        !['check-result.ts', 'unobserved.ts'].includes(entry.name)
      ) {
        out.push({ file: path, text: readFileSync(path, 'utf8') });
      }
    }
  };
  walk(suite);
  return out;
}

describe('unobserved reasons', () => {
  const reasons = Object.keys(UNOBSERVED_REMEDY);

  it('every declared reason is produced by some check or by the runner (no dead reason a report could never show)', () => {
    const sources = producers();
    const dead = reasons.filter((reason) => !sources.some(({ text }) => text.includes(`'${reason}'`)));
    expect(dead).toEqual([]);
  });

  it('the reporters label exactly the declared reasons', () => {
    expect(Object.keys(UNOBSERVED_LABEL).sort()).toEqual([...reasons].sort());
  });

  it("the implementers' guide names every declared reason, and its list of inconclusive reasons no other", () => {
    const guide = readFileSync(join(suite, '../docs/gateway-implementers.md'), 'utf8');
    const start = guide.indexOf('- `inconclusive`');
    expect(start).toBeGreaterThan(-1);
    const bullet = guide.slice(start, guide.indexOf('\n- ', start + 1));
    const listed = bullet.slice(bullet.indexOf('The reasons:'));
    const named = [...listed.matchAll(/`([a-z]+(?:-[a-z]+)+)`/g)].map((m) => m[1] as string);
    expect(named.filter((name) => !reasons.includes(name))).toEqual([]);
    expect(reasons.filter((reason) => !guide.includes(`\`${reason}\``))).toEqual([]);
  });
});
