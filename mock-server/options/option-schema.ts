/**
 * An option set is declared once, as a zod object whose fields carry their description (`.describe()`),
 * bounds and default. This module derives the other forms from it: the rows a command line is built from
 * (`optionTableOf`, plain data, so the CLI starts without loading zod), and the query-string form the admin
 * API parses (`queryShapeOf`, `fromQuery`). The OpenAPI document reads the query form's JSON Schema.
 *
 * @example
 * const schema = z.strictObject({ retryCap: z.number().int().min(1).max(1000).default(6).describe('...') });
 * optionTableOf(schema); // [{ key: 'retryCap', flag: 'retry-cap', query: 'retry_cap', type: 'integer', ... }]
 */
import { z } from 'zod';

/** One option of a set, as plain data: what a command-line flag, a query parameter or an input is built from. */
export interface OptionRow {
  /** The field's name in the schema (`retryCap`, `delay_ms`). */
  key: string;
  /** Where the field sits in the parsed object: `[key]`, or `['match', 'operation']` for a nested one. */
  path: string[];
  /** Command-line flag and Action input name, without dashes (`retry-cap`). */
  flag: string;
  /** Query parameter name (`retry_cap`). */
  query: string;
  description: string;
  type: 'integer' | 'number' | 'string' | 'boolean' | 'list';
  min?: number;
  max?: number;
  /** The only values allowed (an enum, or a union of literals); for a list, the values its items may take. */
  choices?: (string | number)[];
  /** The message a value outside `choices` gets, when the schema words it itself. */
  choicesMessage?: string;
  default?: string | number | boolean;
  required: boolean;
  /**
   * A list given one value per flag (`--tool A --tool B`; an Action input, one value per line) rather than
   * comma-separated: its values may hold commas. Set with `.meta({ repeatable: true })`.
   */
  repeatable?: boolean;
}

/** `retryCap`, `retry_cap` or `maxConcurrencyAfter429` as words: retry, cap; max, concurrency, after, 429. */
const wordsOf = (key: string) =>
  key
    .replace(/([a-z])([A-Z0-9])/g, '$1 $2')
    .replace(/([0-9])([A-Za-z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());

/** `retryCap` -> `retry-cap` (the flag and input name). */
export const kebabCase = (key: string) => wordsOf(key).join('-');
/** `retryCap` -> `retry_cap` (the query parameter name). */
export const snakeCase = (key: string) => wordsOf(key).join('_');

type Json = Record<string, unknown>;

function rowOf(key: string, path: string[], field: Json, required: boolean): OptionRow {
  const row: OptionRow = {
    key,
    path,
    // A field may name its flag itself (`.meta({ flag: 'tool' })` for a list given one value per flag).
    flag: typeof field.flag === 'string' ? field.flag : kebabCase(key),
    query: snakeCase(key),
    description: String(field.description ?? ''),
    type: 'string',
    required,
  };
  const consts = (field.anyOf as Json[] | undefined)?.map((alt) => alt.const);
  if (consts?.every((c) => typeof c === 'number' || typeof c === 'string')) {
    row.type = typeof consts[0] === 'number' ? 'integer' : 'string';
    row.choices = consts as (string | number)[];
  } else if (field.type === 'array') {
    row.type = 'list';
    const items = field.items as Json | undefined;
    if (Array.isArray(items?.enum)) row.choices = items.enum as string[];
  } else {
    row.type = field.type as OptionRow['type'];
    if (Array.isArray(field.enum)) row.choices = field.enum as string[];
  }
  if (field.repeatable === true) row.repeatable = true;
  if (typeof field.minimum === 'number') row.min = field.minimum;
  if (typeof field.maximum === 'number') row.max = field.maximum;
  const fallback = field.default;
  if (typeof fallback === 'string' || typeof fallback === 'number' || typeof fallback === 'boolean')
    row.default = fallback;
  return row;
}

/** The message a union of literals words for a value outside it (`must be 500, 502, 503 or 504`). */
function choicesMessageOf(field: z.ZodType): string | undefined {
  let inner: z.ZodType = field;
  while ('innerType' in inner.def) inner = inner.def.innerType as z.ZodType;
  if (inner.def.type !== 'union') return undefined;
  const error = (inner.def as { error?: (issue: unknown) => unknown }).error;
  const message = error?.({ code: 'invalid_union', input: undefined });
  return typeof message === 'string' ? message : undefined;
}

/**
 * The option rows of a schema, in declaration order; the fields of a nested object (a fault's `match`)
 * come flattened under their own names.
 */
export function optionTableOf(schema: z.ZodObject): OptionRow[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  const rows: OptionRow[] = [];
  const walk = (objectJson: Json, shape: Record<string, z.ZodType>, prefix: string[]) => {
    const properties = (objectJson.properties ?? {}) as Record<string, Json>;
    const required = (objectJson.required ?? []) as string[];
    for (const [key, field] of Object.entries(properties)) {
      if (field.type === 'object') {
        let nested = shape[key] as z.ZodType;
        while ('innerType' in nested.def) nested = nested.def.innerType as z.ZodType;
        walk(field, (nested as z.ZodObject).shape as Record<string, z.ZodType>, [...prefix, key]);
        continue;
      }
      const row = rowOf(key, [...prefix, key], field, required.includes(key));
      const message = choicesMessageOf(shape[key] as z.ZodType);
      if (message) row.choicesMessage = message;
      rows.push(row);
    }
  };
  walk(json, schema.shape as Record<string, z.ZodType>, []);
  return rows;
}

/** The same field, coercing text to a number (as a query string carries it); other fields unchanged. */
function fromText(field: z.ZodType): z.ZodType {
  const def = field.def as { type: string; innerType?: z.ZodType };
  if (def.innerType)
    return field.clone({ ...field.def, innerType: fromText(def.innerType) } as never, { parent: true });
  if (def.type === 'number') return field.clone({ ...field.def, coerce: true } as never, { parent: true });
  return field;
}

/**
 * The query-string form of an option set: the same fields under their snake_case names, numbers coerced
 * from text (`retry_cap=10`), descriptions, bounds and defaults kept (the OpenAPI parameters come from it).
 */
export function queryShapeOf(schema: z.ZodObject): Record<string, z.ZodType> {
  return Object.fromEntries(
    Object.entries(schema.shape as Record<string, z.ZodType>).map(([key, field]) => [
      snakeCase(key),
      fromText(field),
    ]),
  );
}

/** The options a parsed query names, under the schema's own field names (`retry_cap` -> `retryCap`). */
export function fromQuery<S extends z.ZodObject>(
  schema: S,
  query: Record<string, unknown>,
): Partial<z.output<S>> {
  const options: Record<string, unknown> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = query[snakeCase(key)];
    if (value !== undefined) options[key] = value;
  }
  return options as Partial<z.output<S>>;
}
