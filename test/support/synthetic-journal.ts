/**
 * Synthetic journal entries: what `count` requests would have left, without serving them. Paging, export
 * and report tests fill journals with these (memory and Redis alike), so their times are injected, never
 * measured.
 */

import type { JournalEntry } from '../../mock-server/journal/journal.ts';

/** Agents taken in turn by `syntheticEntry(i)` when no agent is given: three named ones and one anonymous. */
export const SYNTHETIC_AGENTS = ['a', 'b', 'c', undefined] as const;

/** The i-th synthetic request: a whoami answered 200 in 1 ms, `i` ms after a fixed epoch. */
export function syntheticEntry(i: number, agent: string | undefined = SYNTHETIC_AGENTS[i % 4]) {
  return {
    request_id: `r${i}`,
    at: 1_700_000_000_000 + i,
    duration_ms: 1,
    real_ms: i,
    method: 'GET',
    path: '/v1/whoami',
    operation: 'whoami' as const,
    status: 200,
    agent,
  };
}

let recorded = 0;
/**
 * An entry as the journal holds it (seq and time set), at `t` ms after a fixed epoch on the gateway and real
 * clock alike: by agent `a`, a whoami answered 200 in 1 ms unless `fields` say otherwise. Each call takes the
 * next seq. Rule and timeline tests build the journals they judge from these.
 */
export function recordedEntry(t: number, fields: Partial<JournalEntry> = {}): JournalEntry {
  const seq = ++recorded;
  return {
    seq,
    request_id: `r${seq}`,
    at: 1_000_000 + t,
    time: new Date(1_000_000 + t).toISOString(),
    duration_ms: 1,
    real_ms: t,
    method: 'GET',
    path: '/v1/whoami',
    operation: 'whoami',
    status: 200,
    agent: 'a',
    ...fields,
  };
}

/**
 * One fetch retried on one connection, each attempt answered 503: [read, written, stall runs] per attempt
 * (journals of a retried fetch, copied row by row from loaded runs).
 */
export const fetchRetries503 = (rows: readonly [number, number, [number, number, number, number][]][]) =>
  rows.map(([read, written, runs], k) =>
    recordedEntry(read, {
      real_ms: read,
      written_ms: written,
      duration_ms: written - read,
      method: 'POST',
      path: '/v1/web/fetch',
      operation: 'web.fetch',
      status: 503,
      code: 'upstream_unavailable',
      url: 'https://docs.example.org/guide',
      request_key: 'fetch guide',
      request_fingerprint: 'fetch guide',
      connection: 1,
      connection_opened_ms: -5,
      connection_seq: k + 1,
      ...(runs.length > 0 ? { stall_runs: runs } : {}),
    }),
  );
