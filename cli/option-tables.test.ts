import { describe, expect, it } from 'vitest';
import { optionTables } from '../dev/gen-option-tables.ts';
import {
  FAULT_OPTION_ROWS,
  PROXY_OPTION_ROWS,
  REPORT_OPTION_ROWS,
  SUITE_OPTION_ROWS,
} from './option-tables.ts';

describe('cli/option-tables.ts', () => {
  it('holds the rows of the option schemas as they are now (else: npm run gen:options)', () => {
    const now = optionTables();
    const hint = 'the schema changed: run npm run gen:options';
    expect(REPORT_OPTION_ROWS, hint).toEqual(now.REPORT_OPTION_ROWS);
    expect(SUITE_OPTION_ROWS, hint).toEqual(now.SUITE_OPTION_ROWS);
    expect(FAULT_OPTION_ROWS, hint).toEqual(now.FAULT_OPTION_ROWS);
    expect(PROXY_OPTION_ROWS, hint).toEqual(now.PROXY_OPTION_ROWS);
  });
});
