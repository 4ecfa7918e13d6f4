import type { CallContext } from '../http/context.ts';

/**
 * The turn facts of a request whose adapter counts the turns of its event loop (node:http): the turn it was
 * read in, the one its connection was accepted in, and the one its answer was written in when that is
 * the turn it was read in (answered at once, in the loop's I/O phase; an answer written later, after a
 * timer or a store's reply, is left without: nothing says what the loop had read before it then); and the
 * loop's stall clock when it was read (`stalled_ms`).
 */
export function noteTurns({ request, note }: CallContext, readTurn: number): void {
  note.read_turn = readTurn;
  if (request.connection?.openedTurn !== undefined) note.opened_turn = request.connection.openedTurn;
  if (request.currentTurn?.() === readTurn) note.written_turn = readTurn;
  if (request.readStall !== undefined) note.stalled_ms = request.readStall;
}
