import type { CallContext, GatewayRequest } from '../http/context.ts';

/**
 * The turn of the event loop an answer written now is written in, when that is the turn its request was
 * read in (answered at once, in the loop's I/O phase); undefined otherwise: an answer written later, after
 * a timer or a store's reply, may be written outside the I/O phase, and nothing then says what the loop had
 * read before it.
 */
export const turnIfAnsweredAtOnce = (request: GatewayRequest): number | undefined =>
  request.readTurn !== undefined && request.answerTurn?.() === request.readTurn
    ? request.readTurn
    : undefined;

/**
 * The turn facts of a request whose adapter counts the turns of its event loop (node:http): the turn it was
 * read in, the one its connection was accepted in, and the one its answer was written in when that is known
 * to be in the loop's I/O phase (`writtenTurn`: the gateway's `turnIfAnsweredAtOnce`; the proxy's,
 * the turn it read the target's end in), so that whatever the loop read in that turn was on its way
 * before the answer; and the loop's runs of stalls before it was read (`stall_runs`).
 */
export function noteTurns({ request, note }: CallContext, writtenTurn: number | undefined): void {
  if (request.readTurn !== undefined) note.read_turn = request.readTurn;
  if (request.connection?.openedTurn !== undefined) note.opened_turn = request.connection.openedTurn;
  if (writtenTurn !== undefined) note.written_turn = writtenTurn;
  if (request.readStalls !== undefined && request.readStalls.length > 0) note.stall_runs = request.readStalls;
}
