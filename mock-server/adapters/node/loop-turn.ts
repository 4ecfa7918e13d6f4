/**
 * The turn of this process's event loop, counted for the journal's turn facts (`read_turn`, `opened_turn`,
 * `written_turn`; mock-server/client-report/facts/causality.ts reads them). Node asks the system once per
 * turn which sockets are ready and then reads and accepts what was waiting: a request read, or a connection
 * accepted, in the turn an answer was written was sent before the client could have read that answer,
 * however long the turn took on a loaded machine. Counted lazily: the first look in a turn schedules one
 * `setImmediate` that moves the count on after the turn's I/O, so an idle process runs nothing.
 *
 * The turn after one in which an answer was written is counted whether or not the gateway looks in it
 * (`answerTurn`): it is the loop's first poll after the answer, the one in which a client in this process
 * reads it. What the gateway accepts or reads in that turn was waiting when the loop polled right after the
 * write; what a client sent once it had read the answer comes a turn later at the earliest. Counted only
 * when something looked, a client's turn spent reading the answer would share a number with the gateway's
 * next look, and the turns could not tell the tail of a batch from a reaction (time did, within a
 * millisecond, on a fast machine).
 */
let turn = 0;
let counting = false;
let countFollowing = false;
// Taken when the module loads: a test that fakes timers afterwards (vi.useFakeTimers) would otherwise freeze
// the count, and every answer would look read in one turn with everything after it.
const schedule = globalThis.setImmediate;

const nextTurn = () => {
  turn++;
  if (countFollowing) {
    // An immediate scheduled while immediates run fires in the next turn: that turn is counted too.
    countFollowing = false;
    schedule(nextTurn);
    return;
  }
  counting = false;
};

/** The current turn's number (increasing by one per turn in which anything looked). */
export function currentTurn(): number {
  if (!counting) {
    counting = true;
    schedule(nextTurn);
  }
  return turn;
}

/**
 * The turn an answer written now is written in (`written_turn`); the turn after it is counted whatever
 * looks in it, so that what the loop found waiting at its first poll after the answer has a number of its own.
 */
export function answerTurn(): number {
  const now = currentTurn();
  countFollowing = true;
  return now;
}
