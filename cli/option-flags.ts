import { type Command, InvalidArgumentError, Option } from 'commander';
import type { OptionRow } from '../mock-server/options/option-schema.ts';
import { intOption } from './cli-options.ts';

/** What a command changes of a flag derived from an option row (the row itself is the schema's). */
export interface FlagSettings {
  /** The value's name in the help, e.g. `tools` for `--allowed-tools <tools>`. */
  placeholder?: string;
  /** A parser of the command's own (a list with a word such as `none`). */
  parse?: (value: string) => unknown;
  /** Leave the default to the library (the help says it), rather than have commander fill it in. */
  defaultInHelpOnly?: boolean;
  mandatory?: boolean;
}

/** `<ms>` for a duration in ms, `<s>` in seconds, `<n>` for a number, `<value>` otherwise. */
function placeholderOf(row: OptionRow): string {
  if (row.repeatable) return 'value';
  if (row.type === 'integer' || row.type === 'number') {
    if (row.flag.endsWith('-ms')) return 'ms';
    if (row.flag.endsWith('-seconds') || row.flag === 'retry-after') return 's';
    if (row.choices) return 'code';
    return 'n';
  }
  if (row.type === 'list') return 'values';
  return row.flag.split('-').at(-1) ?? 'value';
}

/** Comma-separated values, each among the row's choices when it has some. */
const listOf = (row: OptionRow) => (value: string) => {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError('give at least one value');
  const unknown = row.choices ? items.filter((item) => !row.choices?.includes(item)) : [];
  if (unknown.length > 0) throw new InvalidArgumentError(`give values from ${row.choices?.join(', ')}`);
  return items;
};

/** A repeatable flag's values, one per use, in order (a value may hold commas). */
const collect = (value: string, previous: unknown): string[] => [
  ...(Array.isArray(previous) ? (previous as string[]) : []),
  value,
];

/** One of a row's numeric choices (`500`), with the schema's own message for any other value. */
const numberChoice = (row: OptionRow) => (value: string) => {
  if (!row.choices?.map(String).includes(value.trim()))
    throw new InvalidArgumentError(row.choicesMessage ?? `must be one of ${row.choices?.join(', ')}`);
  return Number(value);
};

/**
 * The commander option of an option row: its flag, its description, its bounds checked (an integer
 * from min to max, one of the choices, a list), its default applied by commander (shown as `(default: X)`)
 * unless the settings leave it to the library, in which case the help says it.
 *
 * @example
 * command.addOption(optionOf(row)); // --retry-cap <n>  most consecutive ... (default 6)
 */
function optionOf(row: OptionRow, settings: FlagSettings = {}): Option {
  const takesValue = row.type !== 'boolean';
  const showDefault = row.default !== undefined && row.type !== 'boolean' && settings.defaultInHelpOnly;
  const description = showDefault ? `${row.description} (default ${row.default})` : row.description;
  const option = new Option(
    `--${row.flag}${takesValue ? ` <${settings.placeholder ?? placeholderOf(row)}>` : ''}`,
    description,
  );
  if (settings.parse) option.argParser(settings.parse);
  else if (row.repeatable) option.argParser(collect);
  else if (row.type === 'list') option.argParser(listOf(row));
  else if (row.type === 'integer' && row.choices) option.argParser(numberChoice(row));
  else if (row.type === 'integer')
    option.argParser(intOption(row.min ?? Number.MIN_SAFE_INTEGER, row.max ?? Number.MAX_SAFE_INTEGER));
  else if (row.choices) option.choices(row.choices.map(String));
  if (row.default !== undefined && row.type !== 'boolean' && !settings.defaultInHelpOnly)
    option.default(row.default);
  if (settings.mandatory || row.required) option.makeOptionMandatory();
  return option;
}

/**
 * Adds a flag for each row to a command (the required ones first, then in the rows' order), with the settings given per option key.
 * Returns the command, to chain.
 */
export function addOptionFlags(
  command: Command,
  rows: readonly OptionRow[],
  settings: Record<string, FlagSettings> = {},
  every: FlagSettings = {},
): Command {
  // The options a command cannot run without come first in its help.
  const ordered = [...rows.filter((row) => row.required), ...rows.filter((row) => !row.required)];
  for (const row of ordered) command.addOption(optionOf(row, { ...every, ...settings[row.key] }));
  return command;
}

/**
 * The flags' values (commander's camelCase names) placed where the schema has them: `{ match: { agent } }`
 * for a nested field; absent values stay absent, so the other side fills in its defaults.
 */
export function valuesAt(
  rows: readonly OptionRow[],
  given: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const row of rows) {
    const value = given[camelOf(row.flag)];
    if (value === undefined) continue;
    let at = out;
    for (const step of row.path.slice(0, -1)) {
      at[step] ??= {};
      at = at[step] as Record<string, unknown>;
    }
    at[row.path.at(-1) as string] = value;
  }
  return out;
}

/** commander's attribute name of a flag: `retry-after` -> `retryAfter`. */
export const camelOf = (flag: string) => flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
