import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientReport } from '../mock-server/client-report/report.ts';
import { createClientReport, formatClientReport } from '../mock-server/client-report/report.ts';
import { createClock } from '../mock-server/clock.ts';
import { createGateway, createSharedGateway } from '../mock-server/gateway.ts';
import type { JournalEntry } from '../mock-server/journal/journal.ts';
import { adminCaller, call, search } from './support/call.ts';
import { runCli, startServe } from './support/cli.ts';
import { describeWithRedis, useRedis } from './support/redis.ts';

/** A search by agent-verified as the journal holds it, answered in 1 ms. */
const searchEntry = (
  fields: Partial<JournalEntry> & Pick<JournalEntry, 'seq' | 'at' | 'real_ms'>,
): JournalEntry => ({
  request_id: `r${fields.seq}`,
  time: new Date(fields.at).toISOString(),
  duration_ms: 1,
  method: 'POST',
  path: '/v1/web/search',
  operation: 'web.search',
  status: 200,
  agent: 'agent-verified',
  request_key: `key-${fields.seq}`,
  ...fields,
});

/*
 * Issue 36, point 3: time only moves forward for verdicts. Moving the clock into its past starts a new
 * epoch; the client report never compares requests of different epochs as reactions or waits.
 */

describe('the clock counts epochs', () => {
  it('starts one when set, reset or restored into its past, never when moved forward', () => {
    let real = Date.parse('2026-11-27T12:00:00Z');
    const clock = createClock({ realNow: () => real });
    expect(clock.epoch).toBe(0);
    clock.advance(5_000);
    clock.set(clock.now() + 60_000);
    clock.freeze();
    clock.resume();
    expect(clock.epoch).toBe(0);
    clock.set(Date.parse('2026-01-01T00:00:00Z'));
    expect(clock.epoch).toBe(1);
    clock.reset(); // back to real time: forward from January
    expect(clock.epoch).toBe(1);
    clock.advance(1000);
    clock.reset(); // real time is now 1 s behind: back
    expect(clock.epoch).toBe(2);
    real += 10;
    const other = createClock({ realNow: () => real });
    other.restore(clock.state());
    expect(other.epoch).toBe(2);
    expect(clock.state()).toMatchObject({ epoch: 2 });
  });

  it('records the epoch of each request in the journal, and a scenario that starts in the past begins one', async () => {
    const gateway = createGateway();
    const token = gateway.mintToken('agent-verified');
    await search(gateway, token);
    gateway.useScenario({
      name: 'past',
      description: 'starts in 2026',
      clock: { start: '2026-01-01T00:00:00Z' },
    });
    const again = gateway.mintToken('agent-verified');
    await search(gateway, again);
    const entries = gateway.journal.list();
    expect(entries.map((e) => e.epoch)).toEqual([1]);
    expect(gateway.clock.epoch).toBe(1);
  });
});

describe('the report judges each epoch apart', () => {
  const at = Date.parse('2026-11-27T12:00:00Z');
  const past = Date.parse('2026-01-01T00:00:00Z');
  // The run: six searches, the sixth a 429 asking for 7 s; the clock set back; one more search.
  const entries = [
    ...[1, 2, 3, 4, 5].map((seq) => searchEntry({ seq, at: at + seq, real_ms: 1000 + seq })),
    searchEntry({ seq: 6, at: at + 6, real_ms: 1006, status: 429, code: 'rate_limited', retry_after: '7' }),
    searchEntry({ seq: 7, at: past, real_ms: 1600, epoch: 1 }),
  ];
  const report = (list = entries) =>
    createClientReport({
      agent: 'agent-verified',
      entries: list,
      rateLimitRules: [],
      corpus: createGateway().corpus,
    });

  it('sees no early request across the clock moved back, and says an epoch began', () => {
    const graded = report();
    expect(graded.violations).toEqual([]);
    expect(graded.epochs).toEqual([
      expect.objectContaining({ epoch: 0, first_seq: 1, requests: 6 }),
      expect.objectContaining({ epoch: 1, first_seq: 7, requests: 1, from: '2026-01-01T00:00:00.000Z' }),
    ]);
    // The range shown is the latest epoch's, which never runs backwards.
    expect(graded.from).toBe('2026-01-01T00:00:00.000Z');
    expect(formatClientReport(graded)).toMatch(
      /7 requests in 2 clock epochs[\s\S]*Clock epoch 1 began \(the gateway clock was moved back\) before #7/,
    );
  });

  it('still judges within an epoch: the same early request in epoch 0 is a violation', () => {
    const early = entries.map((e) => (e.seq === 7 ? { ...e, at: at + 600, epoch: undefined } : e));
    expect(report(early).violations.map((v) => v.rule)).toContain('honor-retry-after');
  });
});

describe('the issue, reproduced with real processes', () => {
  const KEY = 'qa-secret-key';
  let gateway: Awaited<ReturnType<typeof startServe>>;
  beforeAll(async () => {
    gateway = await startServe(['--scenario', 'burst-429', '--admin-key', KEY]);
  }, 60_000);
  afterAll(() => gateway?.stop());

  it('serve --scenario burst-429, six searches, admin clock set into the past --frozen, one more: no invented violation', async () => {
    const env = { AGENT_GATEWAY_ADMIN_KEY: KEY };
    // Frozen first, so the six searches fall in one window whatever the machine's speed.
    expect((await runCli(['admin', 'clock', 'freeze', '--base-url', gateway.url], { env })).code).toBe(0);
    const minted = await runCli(['token', 'agent-verified', '--base-url', gateway.url]);
    const token = minted.stdout.trim().split('\n').at(-1) as string;
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 6; i++) {
      const answer = await search(gateway.url, token, `burst ${i}`);
      statuses.push(answer.status);
      retryAfter = answer.headers.get('retry-after') ?? retryAfter;
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    const set = await runCli(
      ['admin', 'clock', 'set', '2026-01-01T00:00:00Z', '--frozen', '--base-url', gateway.url],
      { env },
    );
    expect(set.code, set.stderr).toBe(0);
    const fresh = (await runCli(['token', 'agent-verified', '--base-url', gateway.url])).stdout
      .trim()
      .split('\n')
      .at(-1) as string;
    expect((await search(gateway.url, fresh, 'after the clock moved')).status).toBe(200);

    const json = await runCli(['report', '--agent', 'agent-verified', '--json', '--base-url', gateway.url], {
      env,
    });
    const graded = JSON.parse(json.stdout) as ClientReport;
    expect(graded.violations.filter((v) => v.rule === 'honor-retry-after')).toEqual([]);
    // Each epoch holds the agent's token request (journaled) and its searches: six, then one.
    expect(graded.epochs?.map((e) => e.requests)).toEqual([7, 2]);
    const text = await runCli(['report', '--agent', 'agent-verified', '--base-url', gateway.url], { env });
    expect(text.stdout).toMatch(/Clock epoch \d+ began \(the gateway clock was moved back\) before #\d+/);
    expect(text.code).toBe(0);
  }, 120_000);
});

describeWithRedis('clock epochs on a shared store', () => {
  const redis = useRedis();
  it('the clock moved back through one instance starts the epoch on every instance, and their journal entries say so', async () => {
    const ADMIN = 'epochs-admin-key';
    const config = { store: { url: redis.url, key_prefix: 'epochs', timeout_ms: 10_000 } };
    const [a, b] = [
      await createSharedGateway({ config, clock: createClock(), adminKey: ADMIN }),
      await createSharedGateway({ config, clock: createClock(), adminKey: ADMIN }),
    ];
    const admin = adminCaller(ADMIN);
    try {
      const set = await admin(a, 'POST', '/clock/set', { time: '2026-01-01T00:00:00Z', frozen: true });
      expect(set.body).toMatchObject({ epoch: 1 });
      // B takes the setting over a pub/sub delivery away: polled, with a generous deadline.
      const deadline = Date.now() + 15_000;
      while (b.clock.epoch === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(b.clock.epoch).toBe(1);
      expect((await call(b, 'GET', '/v1/whoami', { token: a.mintToken('agent-verified') })).status).toBe(200);
      const journal = await admin(a, 'GET', '/journal?agent=agent-verified');
      expect(journal.body.entries).toEqual([expect.objectContaining({ operation: 'whoami', epoch: 1 })]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);
});
