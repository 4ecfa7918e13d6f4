/**
 * Comparing whoami bodies of two callers without being fooled by what changes on every call (request
 * ids, timestamps, seconds left): fields whose values differ between two calls by the same caller are
 * volatile, and only the rest tells callers apart.
 */

/** The leaves of a JSON value by path (`$.agent.id`, `$.tools[0]`), each as its JSON text. */
export function jsonLeaves(
  value: unknown,
  path = '$',
  into = new Map<string, string>(),
): Map<string, string> {
  if (Array.isArray(value)) {
    if (value.length === 0) into.set(path, '[]');
    value.forEach((item, i) => {
      jsonLeaves(item, `${path}[${i}]`, into);
    });
  } else if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) into.set(path, '{}');
    for (const [key, item] of entries) jsonLeaves(item, `${path}.${key}`, into);
  } else {
    into.set(path, JSON.stringify(value));
  }
  return into;
}

/** Paths whose values differ between two bodies (present in one only counts as differing). */
export function differingPaths(a: unknown, b: unknown): Set<string> {
  const left = jsonLeaves(a);
  const right = jsonLeaves(b);
  const paths = new Set([...left.keys(), ...right.keys()]);
  return new Set([...paths].filter((p) => left.get(p) !== right.get(p)));
}

/**
 * Whether two callers' bodies differ outside the volatile paths (those that changed between `first` and
 * `again`, two calls by the same caller around the other's).
 *
 * @example
 * tellsCallersApart({ id: 'a', at: 1 }, { id: 'a', at: 3 }, { id: 'b', at: 2 }); // true: id differs
 */
export function tellsCallersApart(first: unknown, again: unknown, other: unknown): boolean {
  const volatile = differingPaths(first, again);
  for (const path of differingPaths(first, other)) if (!volatile.has(path)) return true;
  return false;
}
