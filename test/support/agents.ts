/**
 * Agents for the client-report tests: a well-behaved one that follows every client safety rule of the
 * spec, and small helpers for writing agents that break one rule on purpose.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export { sleep };

export interface AgentOptions {
  baseUrl: string;
  apiKey: string;
  /** Hard cap on attempts of one call (spec section 7). */
  maxAttempts?: number;
  /** First backoff step without Retry-After (ms). */
  backoffBaseMs?: number;
}

export class AccessDeniedError extends Error {}

/** A client that does what the spec asks of one: fresh tokens, Retry-After, jittered backoff, a hard cap. */
export function wellBehavedAgent(options: AgentOptions) {
  const maxAttempts = options.maxAttempts ?? 5;
  const base = options.backoffBaseMs ?? 100;
  let token: string | undefined;

  const freshToken = async () => {
    const response = await fetch(`${options.baseUrl}/idp/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: options.apiKey }),
    });
    token = ((await response.json()) as { token: string }).token;
    return token;
  };

  /** Retry-After in ms (seconds or HTTP-date against the response Date), or undefined. */
  const retryAfterMs = (response: Response) => {
    const value = response.headers.get('retry-after');
    if (value === null) return undefined;
    if (/^\d+$/.test(value)) return Number(value) * 1000;
    const date = Date.parse(value);
    const now = Date.parse(response.headers.get('date') ?? '') || Date.now();
    return Number.isNaN(date) ? undefined : Math.max(0, date - now);
  };

  async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    let refreshed = false;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const current = token ?? (await freshToken());
      let response: Response | undefined;
      try {
        response = await fetch(`${options.baseUrl}${path}`, {
          method,
          headers: { 'X-Agent-Identity': current, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
      } catch {
        response = undefined; // dropped connection: back off like a 5xx
      }
      if (response?.ok) return response.json();
      const code = response
        ? ((await response.json().catch(() => ({}))) as { code?: string }).code
        : undefined;
      if (response?.status === 401 && code === 'invalid_identity_token' && !refreshed) {
        refreshed = true;
        await freshToken();
        continue;
      }
      if (response?.status === 403)
        throw new AccessDeniedError(`${path}: access denied; request access instead of retrying`);
      const retryable = !response || response.status === 429 || response.status >= 500;
      if (!retryable || attempt === maxAttempts)
        throw new Error(`${method} ${path} failed: ${response?.status ?? 'dropped'} ${code ?? ''}`);
      const told = response ? retryAfterMs(response) : undefined;
      // Retry-After when given (a little jitter on top); else exponential backoff with full jitter.
      await sleep(told !== undefined ? told + Math.random() * 50 : Math.random() * base * 2 ** attempt);
    }
    throw new Error('unreachable');
  }

  return {
    whoami: () => call('GET', '/v1/whoami'),
    search: (query: string) => call('POST', '/v1/web/search', { query }),
    fetchPage: (url: string) => call('POST', '/v1/web/fetch', { url }),
  };
}

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
