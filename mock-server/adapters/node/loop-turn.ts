/**
 * The turn of this process's event loop, counted for the journal's turn facts (`read_turn`, `opened_turn`,
 * `written_turn`; mock-server/client-report/facts/causality.ts reads them). Node asks the system once per
 * turn which sockets are ready and then reads and accepts what was waiting: a request read, or a connection
 * accepted, in the turn an answer was written was sent before the client could have read that answer,
 * however long the turn took on a loaded machine. Counted lazily: the first look in a turn schedules one
 * `setImmediate` that moves the count on after the turn's I/O, so an idle process runs nothing.
 */
let turn = 0;
let counting = false;
// Taken when the module loads: a test that fakes timers afterwards (vi.useFakeTimers) would otherwise freeze
// the count, and every answer would look read in one turn with everything after it.
const schedule = globalThis.setImmediate;

const nextTurn = () => {
  turn++;
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
