import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHECKS } from '../conformance/checks/index.ts';
import { CLIENT_RULES } from '../mock-server/client-report/report.ts';
import { citedPlaces } from '../vocabulary/spec-ref.ts';

/**
 * docs/contract.md ends with a table of which checks and client rules cite which section of the spec.
 * It is read off the code here, both ways: every check and rule is in the rows its specRef cites (`citedPlaces`: one row per numbered rule, or
 * the section), and the
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

describe('docs/contract.md', () => {
  it.each([
    ['conformance check', 'check', CHECKS, 'checks'],
    ['client rule', 'client rule', CLIENT_RULES, 'rules'],
  ] as const)(
    'lists every %s under each section it cites, and no %s that does not exist',
    (_kind, noun, items, column) => {
      for (const item of items)
        for (const section of citedPlaces(item.specRef))
          expect(rows.get(section)?.[column] ?? [], `${item.id} under ${section}`).toContain(item.id);
      const ids = new Set(items.map((i) => i.id));
      for (const [section, row] of rows)
        for (const id of row[column]) expect(ids.has(id), `${id} (row ${section}) is no ${noun}`).toBe(true);
    },
  );
});
