import type { JournalEntry } from '../../journal/journal.ts';
import {
  answeredAt,
  createReactionFacts,
  describe,
  firstOnConnection,
  hasConnection,
  honouringOwnRetryAfter,
  parallelismPeaks,
  retryAfterDelay,
  TOGETHER_MS,
} from '../journal-facts.ts';
import { stallsDecided } from '../rule-readings/stall-decided.ts';
import type { ClientRule, Finding } from '../types.ts';

/**
 * The most reactions on open, idle connections (reused from a pool) that arrived within TOGETHER_MS of each
 * other on distinct connections: sent at once. A client sends one request at a time per connection, and a
 * sequential one reuses the connection just freed (undici's pool takes its first idle connection, Node's
 * agent and urllib3 the last freed), so distinct connections within a few milliseconds are a batch, however
 * a loaded machine staggers when the gateway reads them.
 */
export function idleBurst(reactions: readonly JournalEntry[]): { count: number; at?: JournalEntry } {
  const reused = reactions
    .filter((e) => hasConnection(e) && !firstOnConnection(e))
    .sort((a, b) => a.real_ms - b.real_ms);
  const inWindow = new Map<number, number>();
  let best: { count: number; at?: JournalEntry } = { count: 0 };
  let from = 0;
  reused.forEach((e) => {
    inWindow.set(e.connection as number, (inWindow.get(e.connection as number) ?? 0) + 1);
    for (; e.real_ms - (reused[from] as JournalEntry).real_ms > TOGETHER_MS; from++) {
      const c = (reused[from] as JournalEntry).connection as number;
      const left = (inWindow.get(c) as number) - 1;
      if (left === 0) inWindow.delete(c);
      else inWindow.set(c, left);
    }
    if (inWindow.size > best.count) best = { count: inWindow.size, at: e };
  });
  return best;
}

/** A storm as found after one 429: how many at once (at which request), and the reactions counted. */
export interface Storm {
  refusal: JournalEntry;
  count: number;
  at: JournalEntry;
  members: JournalEntry[];
}

/**
 * One violation per storm: storms found after several 429s that share requests (the storm's own requests
 * refused in turn, each opening a window the same storm fills) are one behaviour, counted by its 429s.
 */
export function stormFindings(found: readonly Storm[], most: number): Finding[] {
  const groups: Storm[][] = [];
  let seen = new Set<JournalEntry>();
  for (const storm of found) {
    const last = groups.at(-1);
    if (last && (seen.has(storm.refusal) || storm.members.some((e) => seen.has(e)))) last.push(storm);
    else {
      groups.push([storm]);
      seen = new Set();
    }
    seen.add(storm.refusal);
    for (const e of storm.members) seen.add(e);
  }
  return groups.map((group): Finding => {
    const first = group[0] as Storm;
    const worst = group.reduce((a, b) => (b.count > a.count ? b : a));
    const requests = [...new Set(group.flatMap((g) => [g.refusal, ...g.members]))].sort(
      (a, b) => a.seq - b.seq,
    );
    return {
      message:
        `${worst.count} requests were in flight at once (at #${worst.at.seq}) while the 429 of ${describe(first.refusal)} was in force (at most ${most})` +
        (group.length > 1 ? `; one storm, over ${group.length} 429s in all` : ''),
      requests,
      count: group.length,
      inference:
        'taken as sent at once: on the wire together, or arriving within 10 ms of each other on distinct connections; and as reactions to the 429 (sent with it in hand, by the connection facts)',
    };
  });
}

/**
 * no-parallel-storm (spec §7, 429: "reduce concurrency"). **A storm**: more than `maxConcurrencyAfter429`
 * (default 2) requests in flight at once, while a 429 is in force (its Retry-After, or `quietMs` without one),
 * that were sent with that 429 in hand (reactions, by the connection or delivery facts: facts/reactions.ts).
 * Requests already on their way when the 429 was answered are not part of it: those of a batch under way, and
 * the new connections that joined that batch. **A freed slot**: a connection carries one request at a time,
 * so each answer to a request of the batch lets a client with requests queued in its pool send one more; after
 * a quiet stretch (nothing of the agent's handled for QUIET_MS), when nothing could still be waiting to be
 * accepted, a new connection joins the batch only on such a slot, one connection a slot. Six searches on six
 * new connections right after one slow answer are one freed slot and five reactions sent together: a storm.
 * Most common real way to break it: firing a batch the moment a 429 (or a slow answer after it) comes back.
 * Most unusual legal way to keep it: a client with no pool opening a new connection per call, one after each
 * answer, however fast (test/clients/storms.ts; `sentTogether` in facts/reactions.ts: a chain of connections
 * each accepted once the one before was answered is one request at a time).
 */
export const noParallelStorm: ClientRule = {
  id: 'no-parallel-storm',
  title: 'After a 429, concurrency is reduced: no parallel storm while the limit is in force',
  specRef: [{ section: 7, note: '429: reduce concurrency' }],
  unobserved: (ctx) => stallsDecided(noParallelStorm.judge, ctx),
  judge({ entries, options }) {
    const found: Storm[] = [];
    // Retries that waited out their own Retry-After are not part of a storm.
    const honouring = honouringOwnRetryAfter(entries);
    const parallelism = parallelismPeaks(entries);
    const facts = createReactionFacts(entries);
    entries.forEach((refusal, i) => {
      if (refusal.status !== 429) return;
      // Only reactions to the 429 count towards the storm, not the requests already on their way; none can
      // arrive before it was answered. The peak is looked for at the requests that followed the 429.
      const to = refusal.real_ms + (retryAfterDelay(refusal) ?? options.quietMs);
      const worst = parallelism(
        answeredAt(refusal),
        to,
        i,
        (e) => !honouring.has(e) && facts.isReaction(e, refusal, options.graceMs),
      );
      const burst = idleBurst(worst.members.map((k) => entries[k] as JournalEntry));
      if (burst.count > worst.count && burst.at) {
        worst.count = burst.count;
        worst.position = entries.indexOf(burst.at);
      }
      if (worst.count > options.maxConcurrencyAfter429)
        found.push({
          refusal,
          count: worst.count,
          at: entries[worst.position] as JournalEntry,
          members: [...worst.members].sort((a, b) => a - b).map((k) => entries[k] as JournalEntry),
        });
    });
    return stormFindings(found, options.maxConcurrencyAfter429);
  },
};
