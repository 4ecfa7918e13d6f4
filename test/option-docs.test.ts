import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PASSED_INPUTS } from '../cli/github-action.ts';
import {
  FAULT_OPTION_ROWS,
  PROXY_OPTION_ROWS,
  REPORT_OPTION_ROWS,
  SUITE_OPTION_ROWS,
} from '../cli/option-tables.ts';

/**
 * The guides against the option schemas (one declaration each, cli/option-tables.ts holds their rows): every
 * option is documented where its reader looks, with the schema's default.
 */
const guide = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../docs/${name}`, import.meta.url)), 'utf8');

/** The Markdown table rows of a text, as cells. */
const tableRows = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('| '))
    .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| |\s*\|$/g, '')));

describe('the guides document every option as its schema declares it', () => {
  it("gateway implementers: check's options table has each suite option, with its default", () => {
    const rows = tableRows(guide('gateway-implementers.md'));
    for (const option of SUITE_OPTION_ROWS) {
      const row = rows.find((cells) => cells[0]?.includes(`\`--${option.flag}\``));
      expect(row, `--${option.flag} in the options table`).toBeDefined();
      if (option.default !== undefined && option.type !== 'boolean')
        expect(row?.[1], `--${option.flag}'s default`).toContain(String(option.default));
    }
  });

  it("gateway implementers: the Action's inputs table names each input passed to check", () => {
    const rows = tableRows(guide('gateway-implementers.md'));
    for (const input of Object.keys(PASSED_INPUTS))
      expect(
        rows.some((cells) => cells[0]?.includes(`\`${input}\``)),
        `${input} in the inputs table`,
      ).toBe(true);
  });

  it('agent developers: the report thresholds; QA: the flags of admin faults arm', () => {
    const developers = guide('agent-developers.md');
    for (const option of REPORT_OPTION_ROWS)
      expect(developers).toContain(
        option.default === undefined
          ? `\`--${option.flag}\` (query \`${option.query}\`)`
          : `\`--${option.flag}\` (default ${option.default}, ${option.min} to ${option.max})`,
      );
    const faults = guide('qa.md')
      .split('\n')
      .find((line) => line.includes('faults arm --kind'));
    for (const option of FAULT_OPTION_ROWS) expect(faults, `--${option.flag}`).toContain(`--${option.flag}`);
  });

  it("operators: the proxy's deadlines table has each deadline with its default; agent developers: --keep-field", () => {
    const rows = tableRows(guide('operators.md'));
    const developers = guide('agent-developers.md');
    for (const option of PROXY_OPTION_ROWS) {
      if (option.type !== 'integer') {
        expect(developers, `--${option.flag}`).toContain(`--${option.flag}`);
        continue;
      }
      const row = rows.find((cells) => cells[0]?.includes(`\`--${option.flag}\``));
      expect(row, `--${option.flag} in the deadlines table`).toBeDefined();
      expect(row?.[1], `--${option.flag}'s default`).toBe(`\`${option.default}\``);
      expect(developers, `--${option.flag}`).toContain(`--${option.flag}\` (default ${option.default}`);
    }
  });
});
