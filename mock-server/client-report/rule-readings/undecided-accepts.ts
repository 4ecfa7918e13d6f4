import { asIfUndecidedReacted } from '../facts/first-poll.ts';
import type { ClientRule, RuleContext } from '../types.ts';
import { foundOnlyInReading } from './other-reading.ts';

/*
 * Green means seen, for the rules that judge reactions to a refusal (refresh-invalid-token,
 * no-retry-on-access-denied, honor-retry-after, no-parallel-storm). After a lone answer (nothing else of the
 * agent's on its way), a new connection the gateway accepted at its first poll after writing the answer was
 * waiting then: the tail of a batch opened with the refused request, or, from a client in another process,
 * sent once it had read the answer while the gateway had not polled yet. The turn facts cannot tell which
 * (facts/first-poll.ts). The rules read it as the batch's tail (a miss, never a false
 * flag); when that reading alone kept a rule from failing (read as a reaction, the same journal breaks it),
 * the rule could not observe whether it was kept: NOT OBSERVED, never a pass.
 */

/** The phrase every such reason carries (tests and the differential read it). */
export const UNDECIDED_ACCEPT = 'accepted at the first poll after a lone answer';

/**
 * Why `judge` could not observe whether its rule was kept: it finds nothing, and with every connection
 * accepted at the first poll after a lone answer read as a reaction to it, it finds a violation. Undefined
 * otherwise.
 */
export function undecidedAcceptsDecided(judge: ClientRule['judge'], ctx: RuleContext): string | undefined {
  const reacted = asIfUndecidedReacted(ctx.entries);
  const found = reacted && foundOnlyInReading(judge, ctx, [reacted]);
  if (found === undefined) return undefined;
  return `requests ${found.requests} would break it (${found.message}) if a connection ${UNDECIDED_ACCEPT} (nothing else of the agent's on its way) was opened with that answer in hand; it was waiting when the gateway first polled after writing the answer, so it may as well be the tail of a batch sent with the answered request (a client in another process, or threads started apart): which, the gateway cannot see (docs/agent-developers.md#what-the-client-report-cannot-tell-apart)`;
}
