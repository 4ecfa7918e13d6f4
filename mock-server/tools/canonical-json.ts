/**
 * JSON with object keys in code-point order at every depth and no spacing: two parsed bodies that hold the
 * same data give the same text, however their keys were ordered or spaced when sent. Only what JSON.parse
 * yields is expected (objects, arrays, strings, numbers, booleans, null).
 *
 * @example
 * canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] }); // '{"a":[{"c":3,"d":2}],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    const fields = keys.map(
      (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
    );
    return `{${fields.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
