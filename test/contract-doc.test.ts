import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHECKS } from '../conformance/checks/index.ts';
import { CLIENT_RULES } from '../mock-server/client-report/report.ts';

/**
 * docs/contract.md ends with a table of which checks and client rules cite which section of the spec.
 * It is read off the code here, both ways: every check and rule is in the rows its specRef names, and the
 * table names nothing that does not exist.
 */
const doc = readFileSync(new URL('../docs/contract.md', import.meta.url), 'utf8');
const table = doc.slice(doc.indexOf('## Where each number is used'));
const rows = new Map(
  table
    .split('\n')
    .filter((line) => line.startsWith('| §'))
    .map((line) => {
      const [section, checks, rules] = line
        .split('|')
        .slice(1, 4)
        .map((cell) => cell.trim());
      const ids = (cell = '') => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
      return [section as string, { checks: ids(checks), rules: ids(rules) }];
    }),
);

/** The sections a specRef cites, as the table's rows name them: "§5 rules 3-4" is §5 rule 3 and rule 4. */
function citedSections(specRef: string): string[] {
  const own = specRef.replace(/\([^)]*\)/g, ''); // "(RFC 9110 §5.1)", "(429 remedy)" cite no spec section
  return [...own.matchAll(/§(\d+)(?: rules? (\d+)(?:-(\d+)| and (\d+))?)?/g)].flatMap(
    ([, section, from, to, and]) => {
      if (!from) return [`§${section}`];
      if (and) return [`§${section} rule ${from}`, `§${section} rule ${and}`];
      const last = Number(to ?? from);
      return Array.from(
        { length: last - Number(from) + 1 },
        (_, i) => `§${section} rule ${Number(from) + i}`,
      );
    },
  );
}

describe('docs/contract.md', () => {
  it('reads specRefs as sections', () => {
    expect(citedSections('§5 rules 3-4')).toEqual(['§5 rule 3', '§5 rule 4']);
    expect(citedSections('§5 rule 2 (RFC 9110 §5.1)')).toEqual(['§5 rule 2']);
    expect(citedSections('§7 (429 remedy), §8')).toEqual(['§7', '§8']);
    expect(citedSections('§4 rule 2, §5 rules 2 and 4')).toEqual(['§4 rule 2', '§5 rule 2', '§5 rule 4']);
  });

  it('lists every conformance check under each section it cites, and no check that does not exist', () => {
    for (const check of CHECKS)
      for (const section of citedSections(check.specRef))
        expect(rows.get(section)?.checks ?? [], `${check.id} under ${section}`).toContain(check.id);
    const ids = new Set(CHECKS.map((c) => c.id));
    for (const [section, row] of rows)
      for (const id of row.checks) expect(ids.has(id), `${id} (row ${section}) is no check`).toBe(true);
  });

  it('lists every client rule under each section it cites, and no rule that does not exist', () => {
    for (const rule of CLIENT_RULES)
      for (const section of citedSections(rule.specRef))
        expect(rows.get(section)?.rules ?? [], `${rule.id} under ${section}`).toContain(rule.id);
    const ids = new Set(CLIENT_RULES.map((r) => r.id));
    for (const [section, row] of rows)
      for (const id of row.rules) expect(ids.has(id), `${id} (row ${section}) is no client rule`).toBe(true);
  });
});
