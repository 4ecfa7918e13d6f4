import { describe, expect, it } from 'vitest';
import { call } from '../test/support/call.ts';
import { recordedEntry } from '../test/support/synthetic-journal.ts';
import { formatClientReport } from './client-report/report.ts';
import { createGateway } from './gateway.ts';
import type { JournalEntry } from './journal/journal.ts';
import { assertFollowsClientRules, journalMark, timelineOf } from './testing.ts';

let t = 0;
/** An in-process whoami of one adapter (delivery instance), 1 ms after the one before, with its delivery facts. */
const delivered = (instance: number, seen: number, order: number): JournalEntry =>
  recordedEntry(++t, { answers_seen: seen, answer_order: order, delivery_instance: instance });

describe('the timeline of a shared journal (several in-process adapters)', () => {
  it("says which answer a request was issued after by its own adapter's count, not another's", () => {
    // Instance A answered #1 and #2; instance B answered its own first (order 1) and then issued a request
    // with that answer in hand (seen 1). A's order-1 entry must not hide B's.
    const a1 = delivered(1, 0, 1);
    const a2 = delivered(1, 1, 2);
    const b1 = delivered(2, 0, 1);
    const b2 = delivered(2, 1, 2);
    const lines = timelineOf([a1, a2, b1, b2], 'a').split('\n');
    const lineOf = (e: JournalEntry) => lines.find((l) => l.includes(`#${e.seq} `)) ?? '';
    expect(lineOf(a2)).toContain(`after #${a1.seq}`);
    expect(lineOf(b2)).toContain(`after #${b1.seq}`);
    expect(lineOf(b1)).toContain('before any answer');
  });
});

describe('grading is the gateway report’s own (clientReport with `since`)', () => {
  const whoami = (gateway: ReturnType<typeof createGateway>, token: string) =>
    call(gateway, 'GET', '/v1/whoami', { token });

  it('grades after `since`, and names dropped entries only when some were after it', async () => {
    const gateway = createGateway({ config: { journal: { capacity: 4 } }, log: () => {} });
    const token = gateway.mintToken('agent-verified');
    for (let i = 0; i < 6; i++) await whoami(gateway, token);
    const mark = journalMark(gateway) as number;
    await whoami(gateway, token); // drops an entry of before the mark: the window lost nothing
    const report = assertFollowsClientRules(gateway, 'agent-verified', { since: mark });
    expect(report).toEqual(gateway.clientReport('agent-verified', { since: mark }));
    expect(report).toMatchObject({ requests: 1, options: { since: mark } });
    expect(report.journal_dropped).toBeUndefined();
    expect(report.timeline).toMatch(/^What agent-verified did \(1 requests\):\n.*#7 GET \/v1\/whoami -> 200/);
    // The whole journal lost its oldest requests: said so.
    expect(assertFollowsClientRules(gateway, 'agent-verified').journal_dropped).toBe(3);
    for (let i = 0; i < 4; i++) await whoami(gateway, token); // now #7 itself is gone
    const windowed = assertFollowsClientRules(gateway, 'agent-verified', { since: mark });
    expect(windowed).toMatchObject({ requests: 4, journal_dropped: 7 });
  });

  it("fails with the report's text and timeline as the gateway renders them", async () => {
    const gateway = createGateway({ scenario: 'burst-429', log: () => {} });
    const token = gateway.mintToken('agent-verified');
    for (let i = 0; i < 8; i++)
      await call(gateway, 'POST', '/v1/web/search', { token, body: { query: 'q' } });
    const report = gateway.clientReport('agent-verified');
    expect(report.violations.length).toBeGreaterThan(0);
    expect(() => assertFollowsClientRules(gateway, 'agent-verified')).toThrow(
      `${report.text}\n\n${report.timeline}`,
    );
    expect(report.text).toBe(formatClientReport({ ...report, text: undefined }));
  });
});
