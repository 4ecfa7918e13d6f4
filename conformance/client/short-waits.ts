import type { Exchange } from '../model/suite-request.ts';

/* The suite client's own evidence that a gateway's Retry-After lied (client-send.ts records it,
 * ratelimit.retry-after-honoured reports it): decided from causality, never from timing. */

/**
 * A wait a 429 asked that proved too short: the retry was sent once the wait had passed and met a 429
 * again, and no call of the suite's that could have taken the slot the wait freed was admitted meanwhile
 * (every answer after that 429, to a request sent before the retry was answered, was a 429 too).
 */
export interface ShortWait {
  /** The 429 whose wait was waited. */
  asked: Exchange;
  /** The wait it asked (ms). */
  askedMs: number;
  /** The retry's answer: a 429 again. */
  again: Exchange;
}

/** A retry that met a 429 again, with where it stands in the run's order of sends and answers. */
interface Candidate extends ShortWait {
  /** The answer number of the 429 whose wait was waited. */
  after: number;
  /** Requests sent when the retry's answer arrived. */
  sentBy: number;
  /** The retry's own answer number. */
  answerNo: number;
}

/**
 * The run's answers in order (which request each answered, whether it was a 429) and the retries that met
 * a 429 again. A retry met by a 429 again is evidence only while no other answer after the first 429, to a
 * request sent before the retry's answer arrived, was admitted (anything but a 429 or no answer): such a
 * call, a concurrent copy say, may have taken the one slot the wait freed (contention, not a lie).
 *
 * @example
 * const waits = createShortWaits();
 * const first = waits.answered(1, 429); // a 429 asking 5 s
 * const again = waits.answered(2, 429); // the retry, 5 s later, alone
 * waits.metAgain({ asked, askedMs: 5000, again: retry, after: first, sentBy: 2, answerNo: again }); // true
 */
export function createShortWaits() {
  /** Per answer (answer number - 1): the number of the request it answered, and whether it was a 429. */
  const answers: { sentNo: number; refused: boolean }[] = [];
  const candidates: Candidate[] = [];
  const admittedSince = (c: Pick<Candidate, 'after' | 'sentBy' | 'answerNo'>) => {
    for (let i = c.after; i < answers.length; i++) {
      const answer = answers[i] as { sentNo: number; refused: boolean };
      if (i + 1 !== c.answerNo && answer.sentNo <= c.sentBy && !answer.refused) return true;
    }
    return false;
  };
  return {
    /** Records an answer to request number `sentNo`; returns its answer number. */
    answered(sentNo: number, status: number): number {
      answers.push({ sentNo, refused: status === 429 || status === 0 });
      return answers.length;
    },
    /**
     * A retry that waited what a 429 asked met a 429 again: kept as a candidate, and whether no admitted call
     * explains it so far (the client then backs off more for that call).
     */
    metAgain(candidate: Candidate): boolean {
      if (admittedSince(candidate)) return false;
      candidates.push(candidate);
      return true;
    },
    /** The candidates no admitted call explains, now that more answers are in. */
    proven(): ShortWait[] {
      return candidates
        .filter((c) => !admittedSince(c))
        .map(({ asked, askedMs, again }) => ({ asked, askedMs, again }));
    },
  };
}
