import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_RULES } from './report.ts';

/*
 * rules/ holds the client rules and nothing else: each source file there is one rule the report judges,
 * named after its id, with the parts only it uses. What rules share (readings of a retry schedule, why a
 * reaction) lives in rule-readings/.
 */
const rulesDir = join(import.meta.dirname, 'rules');
const ruleFiles = readdirSync(rulesDir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

describe('rules/ holds rules only', () => {
  it('every rule the report judges has its own file named after its id', () => {
    expect(ruleFiles.map((f) => f.replace(/\.ts$/, '')).sort()).toEqual(CLIENT_RULES.map((r) => r.id).sort());
  });

  for (const file of ruleFiles) {
    it(`${file} is one rule and leans on no sibling in rules/`, async () => {
      const exported = Object.values(await import(join(rulesDir, file)));
      const rules = exported.filter((value) => CLIENT_RULES.includes(value as (typeof CLIENT_RULES)[number]));
      expect(rules, `${file} exports one client rule`).toHaveLength(1);
      const siblings = [...readFileSync(join(rulesDir, file), 'utf8').matchAll(/from '\.\/([^']+)'/g)].map(
        (m) => m[1],
      );
      expect(siblings, `${file} imports from rules/: a part rules share belongs in rule-readings/`).toEqual(
        [],
      );
    });
  }
});
