import { vi } from 'vitest';
import type { Gateway } from '../../mock-server/gateway.ts';

/** Waits `ms` on the timers in force (fake under vi.useFakeTimers). */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs an agent under fake timers to the end: time jumps from one timer to the next. */
export async function runFaked<T>(agent: Promise<T>): Promise<T> {
  let done = false;
  const settled = agent.finally(() => {
    done = true;
  });
  while (!done) await vi.advanceTimersToNextTimerAsync();
  return settled;
}

/** The rules the client report flags for an agent, each once, sorted. */
export const flagged = (gateway: Gateway, agent = 'agent-verified') =>
  [...new Set(gateway.clientReport(agent).violations.map((v) => v.rule))].sort();
