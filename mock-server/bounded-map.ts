/**
 * A Map that holds at most `max` entries, dropping the oldest insertion first. Used wherever the gateway
 * remembers things per request (generated results, idempotency keys), so memory stays bounded under load.
 *
 * @example
 * const cache = createBoundedMap<string, number>(2);
 * cache.set('a', 1); cache.set('b', 2); cache.set('c', 3); // 'a' is dropped
 */
export function createBoundedMap<K, V>(max: number) {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, got ${max}`);
  const map = new Map<K, V>();
  return {
    get: (key: K) => map.get(key),
    set(key: K, value: V) {
      map.delete(key);
      map.set(key, value);
      if (map.size > max) map.delete(map.keys().next().value as K);
    },
    delete: (key: K) => map.delete(key),
    clear: () => map.clear(),
    get size() {
      return map.size;
    },
  };
}

export type BoundedMap<K, V> = ReturnType<typeof createBoundedMap<K, V>>;
