import { describe, expect, it } from 'vitest';
import { fc, test } from '../../test/support/property.ts';
import { recordedEntry } from '../../test/support/synthetic-journal.ts';
import type { JournalEntry } from '../journal/journal.ts';
import { answersInHand, timelineOf } from './timeline.ts';

/** The rule as stated: of the entry's adapter, the answer with the highest order at most its answers seen. */
function naive(entries: readonly JournalEntry[], e: JournalEntry): JournalEntry | undefined {
  let latest: JournalEntry | undefined;
  for (const d of entries) {
    if (d.delivery_instance !== e.delivery_instance || d.answer_order === undefined) continue;
    if (d.answer_order > (e.answers_seen as number)) continue;
    if (latest === undefined || (latest.answer_order as number) <= d.answer_order) latest = d;
  }
  return latest;
}

const request = fc.record({
  instance: fc.integer({ min: 1, max: 3 }),
  seen: fc.integer({ min: 0, max: 30 }),
  order: fc.integer({ min: 1, max: 30 }),
  overHttp: fc.boolean(),
});

describe('the timeline: what the agent had in hand when it issued each request', () => {
  test.prop([fc.array(request, { maxLength: 60 }), fc.integer({ min: 0, max: 60 })], { numRuns: 300 })(
    'answersInHand over the shown entries is the rule, whatever the adapters, counts and ties',
    (made, last) => {
      const entries = made.map((r, i) =>
        r.overHttp
          ? recordedEntry(i + 1, { connection: r.instance })
          : recordedEntry(i + 1, {
              answers_seen: r.seen,
              answer_order: r.order,
              delivery_instance: r.instance,
            }),
      );
      const shown = entries.slice(-last);
      const inHand = answersInHand(entries, shown);
      for (const e of shown)
        expect(inHand.get(e), `#${e.seq}`).toBe(e.answers_seen === undefined ? undefined : naive(entries, e));
    },
  );

  it('shows the most recent requests and counts the earlier ones', () => {
    const entries = Array.from({ length: 45 }, (_, i) => recordedEntry(i + 1, { connection: 1 }));
    const lines = timelineOf(entries, 'a').split('\n');
    expect(lines[0]).toBe('What a did (45 requests):');
    expect(lines[1]).toBe('  ... 5 earlier requests');
    expect(lines).toHaveLength(42);
    expect(lines.at(-1)).toMatch(/#\d+ GET \/v1\/whoami -> 200 {2}conn 1$/);
  });
});
