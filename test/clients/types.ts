import type { Agent as HttpAgent } from 'node:http';
import type { fetch as undiciFetch } from 'undici';
import type { GatewayConfigOverlay } from '../../mock-server/config/schema.ts';
import type { JournalEntry } from '../../mock-server/journal/journal.ts';
import type { FaultSpecInput } from '../../mock-server/scenarios/faults.ts';

/** The client rules of the report, by id. */
export type RuleId =
  | 'honor-retry-after'
  | 'backoff-with-jitter'
  | 'retry-cap'
  | 'refresh-invalid-token'
  | 'no-retry-on-access-denied'
  | 'no-secrets-in-requests'
  | 'untrusted-content'
  | 'no-parallel-storm';

/** What a client program gets to work with: its own gateway, token and connection pools. */
export interface ClientContext {
  /** The gateway it talks to, over node:http on loopback, e.g. `http://127.0.0.1:40123`. */
  baseUrl: string;
  /** The agent's API key (for the identity provider at `/idp/token`). */
  apiKey: string;
  /** A token the gateway minted for the agent. */
  token: string;
  /** With `scenario.staleToken`: a token of the agent's minted and then revoked (one cached from an earlier run). */
  staleToken?: string;
  /** fetch over the program's own connection pool (an undici Agent, closed after the run). */
  fetch: typeof undiciFetch;
  /** A keep-alive node:http agent of its own, for got and axios (destroyed after the run). */
  httpAgent: HttpAgent;
}

/**
 * A client program of the catalogue: a real way of calling the gateway, and the verdict the client report
 * must give it. A `good` program must pass every rule; a `bad` one must trip exactly `rules`.
 */
export interface ClientProgram {
  /** kebab-case, unique. */
  name: string;
  verdict: 'good' | 'bad';
  /** The rules a bad program must trip (none for a good one). */
  rules: readonly RuleId[];
  /** Why this verdict: what the program (or the library, from its own docs and code) does. */
  reason: string;
  /** The fixture agent it runs as. */
  agent: 'agent-verified' | 'agent-early';
  /** The gateway's config for it, and faults armed before it starts. */
  scenario?: { config?: GatewayConfigOverlay; faults?: FaultSpecInput[]; staleToken?: true };
  /**
   * Rules the program is caught by only through the waits the gateway measured (backoff schedules, requests
   * sent together). Under load the waits carry scheduling noise; `timingHeld` says whether this run's waits
   * were still what the program meant, and only then must these rules fire (or, for a rule the program keeps,
   * stay silent). Every other rule is caught by what holds under any load: connection facts, what a request
   * means, streaks, what it carried.
   */
  timing?: readonly RuleId[];
  /**
   * Whether the timing of this run was as the program meant it (`undefined`), or why not, read off its
   * agent's journal entries by the program's own account of what it sent (not by the report's logic).
   */
  timingHeld?(entries: readonly JournalEntry[]): string | undefined;
  run(ctx: ClientContext): Promise<void>;
}
