import type { JournalEntry } from '../../journal/journal.ts';
import { stallBetween } from '../facts/causality.ts';
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
import { undecidedAcceptsDecided } from '../rule-readings/undecided-accepts.ts';
import type { ClientRule, Finding, RuleContext } from '../types.ts';

/**
 * The most reactions sent at once: read in one turn of the event loop on distinct connections (`oneTurnBurst`),
 * or on open, idle connections (reused from a pool) arriving within TOGETHER_MS of each other on distinct
 * connections. A client sends one request at a time per connection, and a
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
  const together = oneTurnBurst(reactions);
  return together.count > best.count ? together : best;
}

/**
 * The most reactions on distinct connections read in one turn of the event loop (`read_turn`), new or reused:
 * all were on their way before any answer written in that turn, so none waited for another's answer; they
 * were in flight at once, however long the turn (a loaded machine reads a batch in fewer, longer turns, not
 * more). A client one request at a time sends its next after an answer, read a turn later at the earliest.
 */
function oneTurnBurst(reactions: readonly JournalEntry[]): { count: number; at?: JournalEntry } {
  const byTurn = new Map<number, { connections: Set<number>; last: JournalEntry }>();
  for (const e of reactions) {
    if (e.read_turn === undefined || !hasConnection(e)) continue;
    const turn = byTurn.get(e.read_turn) ?? { connections: new Set<number>(), last: e };
    turn.connections.add(e.connection as number);
    if (e.seq > turn.last.seq) turn.last = e;
    byTurn.set(e.read_turn, turn);
  }
  let best: { count: number; at?: JournalEntry } = { count: 0 };
  for (const { connections, last } of byTurn.values())
    if (connections.size > best.count) best = { count: connections.size, at: last };
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
        'taken as sent at once: on the wire together, read in one turn of the event loop on distinct connections, or arriving within 10 ms of each other on distinct idle connections; and as reactions to the 429 (sent with it in hand, by the connection facts)',
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
/**
 * Why the rule could not observe a storm a saturated loop may have hidden: more than
 * `maxConcurrencyAfter429` reactions to one 429, each read (or its connection accepted) while the run of
 * stalls under way since the answer to the one before had not ended (the loop never caught up between them,
 * `stallBetween` takes all the time between): a loop that never caught up reads one connection a turn, each
 * turn as long as the machine makes it, so requests sent at once arrive one by one, each after the other's
 * answer. Whether they were on the wire together cannot be told from what the gateway saw.
 */
function stormHiddenByStalls({ entries, options }: RuleContext): string | undefined {
  const facts = createReactionFacts(entries);
  const honouring = honouringOwnRetryAfter(entries);
  for (const refusal of entries) {
    if (refusal.status !== 429 || !hasConnection(refusal)) continue;
    const to = refusal.real_ms + (retryAfterDelay(refusal) ?? options.quietMs);
    const reactions = entries
      .filter(
        (e) =>
          e !== refusal &&
          hasConnection(e) &&
          e.real_ms >= answeredAt(refusal) &&
          e.real_ms <= to &&
          !honouring.has(e) &&
          facts.isReaction(e, refusal, options.graceMs),
      )
      .sort((a, b) => a.real_ms - b.real_ms);
    let chained = 1;
    for (let k = 1; k < reactions.length; k++) {
      const before = reactions[k - 1] as JournalEntry;
      const e = reactions[k] as JournalEntry;
      const gap = e.real_ms - answeredAt(before);
      chained = gap > 0 && gap - stallBetween(before, e) <= TOGETHER_MS ? chained + 1 : 1;
      if (chained > options.maxConcurrencyAfter429)
        return `${chained} requests after the 429 of #${refusal.seq} (up to #${e.seq}) were each read with the gateway's event loop stalling, not caught up since the answer to the one before: whether they were on the wire at once or one after another cannot be told; run it again on a quieter machine`;
    }
  }
  return undefined;
}

export const noParallelStorm: ClientRule = {
  id: 'no-parallel-storm',
  title: 'After a 429, concurrency is reduced: no parallel storm while the limit is in force',
  specRef: [{ section: 7, note: '429: reduce concurrency' }],
  unobserved: (ctx) =>
    stallsDecided(noParallelStorm.judge, ctx) ??
    stormHiddenByStalls(ctx) ??
    undecidedAcceptsDecided(noParallelStorm.judge, ctx),
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
