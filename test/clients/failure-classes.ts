import axios from 'axios';
import type { JournalEntry } from '../../mock-server/journal/journal.ts';
import { fetchPage, isRetryable, NO_LIMITS, search, searchOutage, sleep, waitsBy } from './call.ts';
import type { ClientContext, ClientProgram } from './types.ts';

/*
 * What section 7's table asks of each failure class (backoff-with-jitter, failure-class.ts): after a 429
 * without Retry-After, exponential backoff WITH jitter; after a 5xx, retry with backoff (no jitter asked).
 * The same unjittered schedule, urllib3's Retry (backoff_jitter 0: the first retry at once, then 2f, 4f,
 * held at backoff_max), is legal after 5xx and broken after 429s; a fixed sleep is no backoff after either.
 */

/**
 * urllib3 Retry(total=`total`, backoff_factor=0.1, backoff_max=0.4, status_forcelist=[429, 500, 502, 503,
 * 504]) with its default backoff_jitter of 0: get_backoff_time() is 0 after the first failure, then
 * min(backoff_max, 0.1 x 2^(n-1)) s: 0, 200, then 400 ms for ever. Without Retry-After it sleeps that.
 */
const urllib3Wait = (retry: number) => (retry === 0 ? 0 : Math.min(400, 100 * 2 ** retry));

/**
 * A search as urllib3 sends it: over one kept-alive connection reused for every request (urllib3's pool
 * holds one connection per host by default), here node:http's keep-alive agent; the answer's status, 0 when
 * the connection dropped.
 */
function urllib3Search(ctx: ClientContext) {
  const client = axios.create({
    baseURL: ctx.baseUrl,
    headers: { 'x-agent-identity': ctx.token },
    httpAgent: ctx.httpAgent,
    validateStatus: () => true,
  });
  return (query: string) =>
    client.post('/v1/web/search', { query }).then(
      (answer) => answer.status,
      () => 0,
    );
}

/** One call retried as urllib3 does, up to `total` retries. */
async function urllib3Call(send: (query: string) => Promise<number>, query: string, total: number) {
  for (let retry = 0; ; retry++) {
    const status = await send(query);
    if (!isRetryable(status) || retry === total) return;
    await sleep(urllib3Wait(retry));
  }
}

/** The waits the gateway measured per call of the searches whose query starts with `prefix`. */
const waitsOf = (entries: readonly JournalEntry[], prefix: string) =>
  waitsBy(
    entries.filter((e) => e.query?.startsWith(prefix)),
    (e) => e.query,
  );

/** The concurrency limit and a slow fetch that holds the agent's one slot: every search meanwhile is 429. */
const ONE_IN_FLIGHT = {
  rate_limits: { rules: [], concurrency: { per_agent: 1 } },
  tools: { 'web.fetch': { latency_ms: 10_000 } },
};

export const FAILURE_CLASSES: ClientProgram[] = [
  {
    name: 'urllib3-capped-on-5xx',
    verdict: 'good',
    rules: [],
    reason:
      'urllib3 Retry(total=5, backoff_factor=0.1, backoff_max=0.4, status_forcelist=[500, 502, 503, 504]), default backoff_jitter 0, four searches in turn over its one kept-alive connection during an outage of 20 503s: 0, 200, then 400 ms, no jitter (three calls give up after their sixth attempt, at the cap; the fourth recovers). After a 5xx section 7 asks retry with backoff, not jitter: it backs off and holds its cap',
    agent: 'agent-verified',
    scenario: { config: NO_LIMITS, faults: [searchOutage(20)] },
    // In turn, as one agent loop calls requests, over one connection as urllib3's pool keeps it: an immediate
    // retry on another idle connection of a pool, within a turn of the failure's answer, cannot be told from
    // a copy sent together (a pool's queued copy goes out the same way), and is counted as one.
    async run(ctx) {
      const send = urllib3Search(ctx);
      for (let c = 0; c < 4; c++) await urllib3Call(send, `urllib3 outage ${c}`, 5);
    },
  },
  {
    name: 'urllib3-capped-on-429',
    verdict: 'bad',
    rules: ['backoff-with-jitter'],
    reason:
      'the same urllib3 Retry (total=4, 429 in status_forcelist) meeting 429s without Retry-After (the concurrency limit, while its slow fetch holds the one slot): eight searches in turn, each retried after 0, 200, 400 and 400 ms with no jitter. After a 429 section 7 asks exponential backoff with jitter: every call on one schedule is a fleet retrying in lock-step',
    agent: 'agent-verified',
    scenario: { config: ONE_IN_FLIGHT },
    // Eight sequences of 0, 200, 400, 400 ms are one schedule through 15 ms of load at their 2nd to 4th
    // waits (backoff-with-jitter.test.ts, every seed); the first (0 ms) is the noisiest and adds nothing.
    // Every search must also have met its 429s (the slow fetch held the slot throughout).
    timing: ['backoff-with-jitter'],
    timingHeld(entries) {
      const waits = waitsOf(entries, 'urllib3 limited');
      if (waits.length < 8 || waits.some((w) => w.length < 4))
        return `only ${waits.length} searches, retried ${waits.map((w) => w.length).join('/')} times: the slow fetch did not hold the slot for all of them`;
      for (let k = 1; k < 4; k++) {
        const at = waits.map((w) => w[k] as number);
        const spread = Math.max(...at) - Math.min(...at);
        if (spread > 15) return `load spread the ${k + 1}th waits by ${Math.round(spread)} ms (past 15 ms)`;
      }
      return undefined;
    },
    async run(ctx) {
      // The fetch takes the agent's one slot for 10 s; the searches start once it is surely in flight.
      const holder = fetchPage(ctx, 'https://docs.example.org/guide');
      await sleep(300);
      const send = urllib3Search(ctx);
      for (let c = 0; c < 8; c++) await urllib3Call(send, `urllib3 limited ${c}`, 4);
      await holder;
    },
  },
  {
    name: 'fixed-one-second-on-5xx',
    verdict: 'bad',
    rules: ['backoff-with-jitter'],
    reason:
      '`while (status >= 500) { await sleep(1000); retry(); }` capped at five attempts: a search meets four 503s without Retry-After and is retried every second. After a 5xx section 7 asks retry with backoff: a fixed sleep never backs off',
    agent: 'agent-verified',
    scenario: { config: NO_LIMITS, faults: [searchOutage(4)] },
    // Identical intervals are 5% apart at most (50 ms at 1 s): past that, load made the waits differ.
    timing: ['backoff-with-jitter'],
    timingHeld(entries) {
      const [waits = []] = waitsOf(entries, 'fixed beat');
      const first = waits[0] as number;
      return waits.length >= 4 && waits.every((w) => Math.abs(w - first) <= 50)
        ? undefined
        : `waits ${waits.map(Math.round).join(', ')} ms: load spread them past 50 ms`;
    },
    async run(ctx) {
      for (let attempt = 1; attempt <= 5; attempt++) {
        const answer = await search(ctx, 'fixed beat');
        if (answer.status < 500) return;
        await sleep(1000);
      }
    },
  },
];
