/**
 * Agents for the client-report tests: the well-behaved one of the client catalogue, and a helper for writing
 * agents that break one rule on purpose.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export { AccessDeniedError, wellBehavedAgent } from '../clients/well-behaved-agent.ts';
export { sleep };

/** Sends one request with a fixed token; for agents that break rules on purpose. */
export async function send(
  baseUrl: string,
  token: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<number> {
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'X-Agent-Identity': token, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}
