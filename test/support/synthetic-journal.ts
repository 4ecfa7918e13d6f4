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
