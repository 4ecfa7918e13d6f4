/**
 * Synthetic journal entries: what `count` requests would have left, without serving them. Paging, export
 * and report tests fill journals with these (memory and Redis alike), so their times are injected, never
 * measured.
 */

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
