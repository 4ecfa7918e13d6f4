/*
 * retry-cap (spec section 7: retry loops must have a hard cap; blind retry loops are to be avoided).
 *
 * What it means: one request (one question) is attempted at most `retryCap` times in a row while it fails
 * (429, 5xx, dropped), however its bytes change between attempts (an attempt counter, a cache-buster, a
 * reworded query), then the failure is reported.
 * Most common real way to break it: `while (!ok) retry()`, or an LLM tool loop that rewords the same search
 * after every 503 ("weather paris", "paris weather today", ...) with no count.
 * Most unusual legal way to keep it: many different questions during an outage, each given up after a few
 * attempts, where the questions follow one template (`ocean shipping rates 1`, `... 2`, ...): a template
 * filled with another number is another question, not a rewording of the last one.
 * Not loops: GET /v1/health, which a monitor polls on its own beat (see backoff-with-jitter).
 */
import type { JournalEntry } from '../../journal/journal.ts';
import { meaningOfUrl, wordsOf } from '../../tools/request-meaning.ts';
import {
  answeredAt,
  createReactionFacts,
  describe,
  isFailure,
  keyOf,
  TOGETHER_MS,
} from '../journal-facts.ts';
import type { ClientRule, Finding } from '../types.ts';

// Words that carry no subject: a rewording adds or drops them freely.
const FILLER = new Set(
  'a an and are at about can do does for how i in is me of on or please show tell the to what when where which who why with'.split(
    ' ',
  ),
);

type Subject = { words?: Set<string>; url?: string };

const NUMBER = /^\p{N}+$/u;
/** The words of a query that are numbers, as one text (order kept: `3 of 10` is not `10 of 3`). */
const numbersOf = (words: ReadonlySet<string>) => [...words].filter((w) => NUMBER.test(w)).join(' ');
/** Two queries name different numbers: both have some, and not the same. */
const differ = (a: string, b: string) => a !== '' && b !== '' && a !== b;

/**
 * What a request is about, beyond its exact meaning: the words of a search (filler words left out), the URL
 * of a fetch (whatever the other fields). Other requests have no subject beyond their key.
 */
function subjectOf(e: JournalEntry): Subject {
  if (e.operation === 'web.search' && e.query !== undefined)
    return { words: new Set(wordsOf(e.query).filter((w) => !FILLER.has(w))) };
  if (e.operation === 'web.fetch' && e.url !== undefined) return { url: meaningOfUrl(e.url, [e.at]) };
  return {};
}

/**
 * Whether a search rewords the loop's recent ones: more than half of its words (filler left out) were in
 * them. `paris weather` and `current weather paris` reword `weather in Paris?`; `weather in london` asks
 * another question (one word of two), and so does `rust lifetime errors` after `rust borrow checker`.
 * Fetches: the same URL. Other requests are reworded by nothing (their key is all they have).
 */
function isRewording(recent: readonly Subject[], next: Subject): boolean {
  if (next.url !== undefined) return recent.some((s) => s.url === next.url);
  if (!next.words || next.words.size === 0) return false;
  // A template filled with another number asks another question: `ocean shipping rates 3` is not a
  // rewording of `ocean shipping rates 2` (a rewording keeps the numbers it had).
  const numbers = numbersOf(next.words);
  if (recent.some((s) => s.words && differ(numbersOf(s.words), numbers))) return false;
  let known = 0;
  for (const word of next.words) if (recent.some((s) => s.words?.has(word))) known++;
  return known / next.words.size > 0.5;
}

/** A retry loop: consecutive failed attempts of one request, or of rewordings of it. */
interface Loop {
  operation: string;
  entries: JournalEntry[];
  /**
   * Its parallel chains of attempts: copies of the request on their way together (or read in one turn on
   * two idle connections) each start one, and a retry continues the chain whose last attempt failed first
   * (first failed, first retried), as in `retryChains`. A sequential loop is one chain however its pool
   * spreads it over connections; four parallel calls retried on one schedule are four, however load spreads
   * their retries apart.
   */
  chains: JournalEntry[][];
  /** Whether one of its chains went over the cap already: a loop is one violation. */
  reported: boolean;
  keys: Set<string>;
  /** What its most recent attempts were about (a rewording may drift: it is compared with each). */
  subjects: Subject[];
}

// A rewording is compared with this many of a loop's most recent attempts.
const RECENT_SUBJECTS = 4;
// Parallel chains followed per loop (bounds the work per request); further copies on their way count as one
// of them.
const MAX_CHAINS = 32;

export const retryCap: ClientRule = {
  id: 'retry-cap',
  title: 'Retry loops have a hard cap: never more consecutive failed attempts of one request than the cap',
  specRef: [{ section: 7, note: 'retry loops must have a hard cap' }],
  judge({ entries, options }) {
    const findings: Finding[] = [];
    const facts = createReactionFacts(entries);
    // What each query or URL is about, worked out once per distinct text.
    const subjects = new Map<string, Subject>();
    const subject = (e: JournalEntry) => {
      const text = `${e.operation} ${e.query ?? e.url ?? ''}`;
      let known = subjects.get(text);
      if (!known) {
        known = subjectOf(e);
        subjects.set(text, known);
      }
      return known;
    };
    // Open loops by the key of their last attempt, and each operation's current streak of failures: the
    // loop of its most recent failure, which a reworded retry continues.
    const byKey = new Map<string, Loop>();
    const streak = new Map<string, Loop>();
    const close = (loop: Loop) => {
      for (const key of loop.keys) if (byKey.get(key) === loop) byKey.delete(key);
    };
    for (const e of entries) {
      const key = keyOf(e);
      // Health is polled, not retried (section 4 rule 1; see backoff-with-jitter): no loop to cap.
      if (!key || e.operation === 'health') continue;
      const sameKey = byKey.get(key);
      const current = streak.get(e.operation);
      // A different request that rewords the operation's last failed attempt, sent as a retry of it.
      const rewords =
        current !== undefined &&
        current !== sameKey &&
        isRewording(current.subjects, subject(e)) &&
        facts.isReaction(e, current.entries.at(-1) as JournalEntry, 0);
      if (!isFailure(e)) {
        // A success ends the loop of its request, and of what it reworded, and the operation's streak.
        if (sameKey) close(sameKey);
        if (current && rewords) close(current);
        streak.delete(e.operation);
        continue;
      }
      const loop = sameKey ?? (rewords ? current : undefined);
      if (!loop) {
        const fresh: Loop = {
          operation: e.operation,
          entries: [e],
          chains: [[e]],
          reported: false,
          keys: new Set([key]),
          subjects: [subject(e)],
        };
        byKey.set(key, fresh);
        streak.set(e.operation, fresh);
        continue;
      }
      loop.entries.push(e);
      if (!loop.keys.has(key)) {
        loop.keys.add(key);
        loop.subjects = [subject(e), ...loop.subjects].slice(0, RECENT_SUBJECTS);
      }
      byKey.set(key, loop);
      streak.set(e.operation, loop);
      // A retry of the chain whose last attempt failed first among those it reacted to; a copy sent together
      // with them (or on its way before their answers) is a parallel chain of its own.
      let chain: JournalEntry[] | undefined;
      for (const candidate of loop.chains) {
        const last = candidate.at(-1) as JournalEntry;
        const reacted =
          facts.isReaction(e, last, 0) &&
          !(e.real_ms - last.real_ms <= TOGETHER_MS && facts.sentTogether(e, last));
        if (reacted && (!chain || answeredAt(last) < answeredAt(chain.at(-1) as JournalEntry)))
          chain = candidate;
      }
      if (!chain) {
        if (loop.chains.length < MAX_CHAINS) loop.chains.push([e]);
        continue;
      }
      chain.push(e);
      if (!loop.reported && chain.length === options.retryCap + 1) {
        loop.reported = true;
        const first = loop.entries[0] as JournalEntry;
        findings.push({
          message:
            loop.keys.size === 1
              ? `${describe(first)} was attempted ${chain.length} times in a row without success (cap ${options.retryCap}: this report's threshold, retryCap, since the spec leaves the cap's value open, §8); stop after the cap and report the failure`
              : `${describe(first)} was attempted ${chain.length} times in a row without success, changed or reworded ${loop.keys.size - 1} time(s) on the way (cap ${options.retryCap}: this report's threshold, retryCap, since the spec leaves the cap's value open, §8); a retry that rewords the request is still the same loop`,
          requests: loop.entries.slice(0, 12),
        });
      }
    }
    return findings;
  },
};
