import { vi } from 'vitest';
import type { Gateway } from '../../mock-server/gateway.ts';
import { runOnFakeTime } from '../../mock-server/run-on-fake-time.ts';

/** Waits `ms` on the timers in force (fake under vi.useFakeTimers). */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs an agent under fake timers to the end (time jumps from one timer to the next): the shipped helper. */
export const runFaked = <T>(agent: Promise<T>): Promise<T> => runOnFakeTime(agent, { timers: vi });

/** The rules the client report flags for an agent, each once, sorted. */
export const flagged = (gateway: Gateway, agent = 'agent-verified') =>
  [...new Set(gateway.clientReport(agent).violations.map((v) => v.rule))].sort();
