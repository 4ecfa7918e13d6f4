import type { JournalEntry } from '../../journal/journal.ts';

/** A failed attempt: rate-limited, a server error, or a dropped connection. */
export const isFailure = (e: JournalEntry) => e.status === 429 || e.status === 0 || e.status >= 500;

/** When the answer was written to the client, on the real clock (when it was built, for hand-written entries). */
export const answeredAt = (e: JournalEntry) => e.written_ms ?? e.real_ms + e.duration_ms;

/**
 * What a request asked for, for recognising its retries: its meaning (`request_key`: case, spacing,
 * punctuation and ignored fields do not count) where the journal has it, else its bytes.
 */
export const keyOf = (e: JournalEntry) => e.request_key ?? e.request_fingerprint;

/** Short human text for one request, e.g. `#12 POST /v1/web/search -> 429 rate_limited`. */
export const describe = (e: JournalEntry) =>
  `#${e.seq} ${e.method} ${e.path} -> ${e.status === 0 ? 'dropped' : e.status}${e.code ? ` ${e.code}` : ''}`;

/** Adds an entry to its group (`key`) of `groups`, starting the group with it if it has none yet. */
export function addToGroup<K>(groups: Map<K, JournalEntry[]>, key: K, e: JournalEntry): void {
  const group = groups.get(key);
  if (group) group.push(e);
  else groups.set(key, [e]);
}
