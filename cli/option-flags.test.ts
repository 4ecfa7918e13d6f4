import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addOptionFlags, valuesAt } from './option-flags.ts';
import { FAULT_OPTION_ROWS, REPORT_OPTION_ROWS, SUITE_OPTION_ROWS } from './option-tables.ts';

/** A throwaway command with the rows' flags; parse errors are thrown, not printed and exited. */
function commandWith(rows: typeof REPORT_OPTION_ROWS, inHelpOnly: boolean) {
  const command = new Command('x').exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  return addOptionFlags(command, rows, {}, { defaultInHelpOnly: inHelpOnly });
}

describe('flags derived from an option schema', () => {
  it("checks a value against the schema's bounds and choices, with the schema's wording", () => {
    const report = commandWith(REPORT_OPTION_ROWS, true);
    expect(report.parse(['--retry-cap', '10', '--quiet-ms', '0'], { from: 'user' }).opts()).toEqual({
      retryCap: 10,
      quietMs: 0,
    });
    expect(() => commandWith(REPORT_OPTION_ROWS, true).parse(['--retry-cap', '0'], { from: 'user' })).toThrow(
      /must be an integer from 1 to 1000/,
    );
    expect(() =>
      commandWith(FAULT_OPTION_ROWS, true).parse(['--kind', 'status', '--status', '501'], { from: 'user' }),
    ).toThrow(/must be 500, 502, 503 or 504/);
    expect(() => commandWith(FAULT_OPTION_ROWS, true).parse([], { from: 'user' })).toThrow(/--kind/);
  });

  it('leaves a default to the other side, saying it in the help, or has commander fill it in', () => {
    const report = commandWith(REPORT_OPTION_ROWS, true);
    expect(report.parse([], { from: 'user' }).opts()).toEqual({});
    expect(report.helpInformation()).toContain('(default 6)');
    const suite = commandWith(SUITE_OPTION_ROWS, false).parse([], { from: 'user' }).opts();
    expect(suite).toMatchObject({ rateLimitBudget: 300, maxWaitSeconds: 60 });
    // A default that depends on other options is the library's to apply: no flag default.
    expect(suite.deniedTool).toBeUndefined();
    expect(suite.strict).toBeUndefined();
  });

  it("places the values where the schema has them: a fault's match fields under match", () => {
    const arm = commandWith(FAULT_OPTION_ROWS, true).parse(
      ['--kind', 'status', '--operation', 'web.search', '--agent', 'a', '--retry-after', '2', '--count', '3'],
      { from: 'user' },
    );
    expect(valuesAt(FAULT_OPTION_ROWS, arm.opts())).toEqual({
      kind: 'status',
      match: { operation: 'web.search', agent: 'a' },
      retry_after: 2,
      count: 3,
    });
    expect(valuesAt(FAULT_OPTION_ROWS, { kind: 'drop', every: 2 })).toEqual({ kind: 'drop', every: 2 });
  });
});
