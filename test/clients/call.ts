import { setTimeout as sleep } from 'node:timers/promises';
import type { JournalEntry } from '../../mock-server/journal/journal.ts';
import type { ClientContext } from './types.ts';

export { sleep };

/** An answer as a program sees it: status (0 for a dropped connection), Retry-After, JSON body. */
export interface Answer {
  status: number;
  retryAfter?: string;
  body: Record<string, unknown>;
}

/**
 * One call over the program's own pool, with its token; the body is read to the end, so the connection is
 * free again (keep-alive) when the call returns.
 */
export async function call(
  ctx: ClientContext,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  options: { token?: string } = {},
): Promise<Answer> {
  try {
    const response = await ctx.fetch(`${ctx.baseUrl}${path}`, {
      method,
      headers: {
        'x-agent-identity': options.token ?? ctx.token,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Not JSON: the status says enough.
    }
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after') ?? undefined,
      body: parsed,
    };
  } catch {
    return { status: 0, body: {} };
  }
}

/** A search, as most programs send it. */
/** A token minted by the program itself, posting its API key to the identity provider (`/idp/token`). */
export async function mintOwnToken(ctx: ClientContext): Promise<string> {
  const response = await ctx.fetch(`${ctx.baseUrl}/idp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: ctx.apiKey }),
  });
  const body = (await response.json()) as { token?: string };
  if (!body.token) throw new Error(`the identity provider minted no token: ${response.status}`);
  return body.token;
}

export const search = (ctx: ClientContext, query: string, extra: Record<string, unknown> = {}) =>
  call(ctx, 'POST', '/v1/web/search', { query, ...extra });

/** A page fetch. */
export const fetchPage = (ctx: ClientContext, url: string) => call(ctx, 'POST', '/v1/web/fetch', { url });

/** Retry-After in milliseconds (delta-seconds; the reference gateway's default), or undefined. */
export const retryAfterMs = (answer: Answer) =>
  answer.retryAfter !== undefined && /^\d+$/.test(answer.retryAfter)
    ? Number(answer.retryAfter) * 1000
    : undefined;

/** Exponential backoff with equal jitter: half of `base * 2^(attempt-1)` fixed, half random. */
export const equalJitter = (base: number, attempt: number) => {
  const step = base * 2 ** (attempt - 1);
  return step / 2 + (Math.random() * step) / 2;
};

/** Equal jitter on a step capped at `cap`: the jitter survives the cap (clamping after it would remove it). */
export const cappedEqualJitter = (base: number, attempt: number, cap: number) => {
  const step = Math.min(cap, base * 2 ** (attempt - 1));
  return step / 2 + (Math.random() * step) / 2;
};

/** A failure a client retries: rate limited, a server error, or a dropped connection. */
export const isRetryable = (status: number) => status === 429 || status === 0 || status >= 500;

/** When the gateway wrote an entry's answer. */
const answered = (e: JournalEntry) => e.written_ms ?? e.real_ms + e.duration_ms;

/**
 * The waits the gateway measured between consecutive attempts of each group of entries (a program's own
 * account of which requests are one call): the next attempt's arrival minus the previous one's answer.
 */
export function waitsBy(
  entries: readonly JournalEntry[],
  groupOf: (e: JournalEntry) => string | undefined,
): number[][] {
  const groups = new Map<string, JournalEntry[]>();
  for (const e of entries) {
    const group = groupOf(e);
    if (group === undefined) continue;
    groups.set(group, [...(groups.get(group) ?? []), e]);
  }
  return [...groups.values()].map((attempts) =>
    attempts.slice(1).map((e, k) => e.real_ms - answered(attempts[k] as JournalEntry)),
  );
}

/**
 * The waits of `calls` copies of one request retried in parallel rounds (the k-th arrival of each round is
 * the k-th copy): for clients whose parallel calls cannot be told apart by what they send.
 */
export function waitsOfRounds(entries: readonly JournalEntry[], calls: number): number[][] {
  const byArrival = [...entries].sort((a, b) => a.real_ms - b.real_ms);
  const rounds: JournalEntry[][] = [];
  for (let k = 0; k < byArrival.length; k += calls) rounds.push(byArrival.slice(k, k + calls));
  return Array.from({ length: calls }, (_, j) =>
    rounds
      .slice(1)
      .filter((round, r) => round[j] && rounds[r]?.[j])
      .map(
        (round, r) =>
          (round[j] as JournalEntry).real_ms - answered((rounds[r] as JournalEntry[])[j] as JournalEntry),
      ),
  );
}

/**
 * Whether at least `atLeast` of the requests whose query starts with `prefix` arrived within 10 ms of each
 * other (a storm fired at once, as a program means it): undefined when they did, else why not, for
 * `timingHeld`.
 */
export function arrivedTogether(
  entries: readonly JournalEntry[],
  prefix: string,
  atLeast: number,
): string | undefined {
  const storm = entries.filter((e) => e.query?.startsWith(prefix));
  const together = storm.some(
    (e) => storm.filter((x) => x.real_ms >= e.real_ms && x.real_ms - e.real_ms <= 10).length >= atLeast,
  );
  return together ? undefined : `no ${atLeast} '${prefix}…' requests arrived within 10 ms of each other`;
}

/**
 * Whether one call's retries kept their planned schedule (for `timingHeld`): at least `atLeast` waits, the
 * k-th (from 0) no longer than `plannedMax(k)` plus 50 ms of noise. Undefined when they did, else why not.
 */
export function keptSchedule(
  entries: readonly JournalEntry[],
  plannedMax: (k: number) => number,
  atLeast: number,
): string | undefined {
  const [waits = []] = waitsBy(entries, (e) => e.operation);
  const late = waits.findIndex((wait, k) => wait > plannedMax(k) + 50);
  if (waits.length >= atLeast && late < 0) return undefined;
  const shown = waits.map(Math.round).join('/');
  return late < 0
    ? `only ${waits.length} waits (${shown} ms), fewer than the ${atLeast} planned`
    : `waits ${shown} ms: load stretched wait ${late + 1} past its planned ${Math.round(plannedMax(late))} ms`;
}

/** No rate-limit rule: a program meets only the outage it is given, never a 429. */
export const NO_LIMITS = { rate_limits: { rules: [] } };

/** web.search fails with 503 and no Retry-After, `count` times. */
export const searchOutage = (count: number) => ({
  match: { operation: 'web.search' as const },
  kind: 'status' as const,
  status: 503 as const,
  count,
});
