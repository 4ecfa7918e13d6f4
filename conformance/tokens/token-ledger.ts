import type { Credential, Exchange } from '../model/suite-request.ts';

/*
 * What the gateway said of each real token the suite sent unaltered: when it accepted it and when it
 * refused it (401 invalid_identity_token). A token does not come back to life: one refused and then
 * accepted again, by a request sent after the refusal arrived, was valid when it was refused. That
 * refusal is evidence against the gateway (spec §4 rule 2, §5 rules 2-3), never against the token: one
 * instance behind a balancer with a stale signing key, a replica's revocation list, a clock skewed ahead.
 * A token refused and never accepted again may simply have expired: that says nothing of the gateway.
 */

/** One answer to a real token, with where it falls in the run's order of answers. */
export interface TokenSighting {
  exchange: Exchange;
  /** How many answers had arrived when this request was sent. */
  sentAfter: number;
  /** This answer's number in the run (1 for the first answer of the run). */
  answerNo: number;
}

/** A token refused, then accepted by a request sent after the refusal arrived: the gateway's doing. */
export interface TokenContradiction {
  credential: Credential;
  refused: TokenSighting;
  acceptedAfter: TokenSighting;
  /** An acceptance before the refusal too, when there was one. */
  acceptedBefore?: TokenSighting;
  /** How often the gateway refused and accepted this token in the run. */
  refusals: number;
  acceptances: number;
}

/** Whether an answer shows the token accepted: served, or refused by policy only (403 access_denied, §5 rule 4). */
export function acceptsToken(exchange: Exchange): boolean {
  const { status } = exchange.response;
  const code = (exchange.response.json as { code?: unknown } | undefined)?.code;
  return (
    (status >= 200 && status < 300 && code !== 'rate_limited') || (status === 403 && code === 'access_denied')
  );
}

/** Whether an answer refuses the token itself (401 invalid_identity_token). */
export function refusesToken(exchange: Exchange): boolean {
  const code = (exchange.response.json as { code?: unknown } | undefined)?.code;
  return exchange.response.status === 401 && code === 'invalid_identity_token';
}

interface Entry {
  credential: Credential;
  firstAccepted?: TokenSighting;
  lastAccepted?: TokenSighting;
  firstRefused?: TokenSighting;
  refusals: number;
  acceptances: number;
}

/** The ledger of one run. Keeps a few sightings per token value, however long the run (no growth per request). */
export function createTokenLedger() {
  const byValue = new Map<string, Entry>();
  const ids = new Map<string, number>();
  return {
    /** A small number standing for a token value in exchanges (the value itself never leaves the ledger). */
    idOf(value: string): number {
      let id = ids.get(value);
      if (id === undefined) {
        id = ids.size + 1;
        ids.set(value, id);
      }
      return id;
    },

    /** Records an answer to a real token sent unaltered (the value stays in memory, never in a report). */
    record(value: string, credential: Credential, sighting: TokenSighting): void {
      const accepted = acceptsToken(sighting.exchange);
      const refused = refusesToken(sighting.exchange);
      if (!accepted && !refused) return;
      const entry = byValue.get(value) ?? { credential, refusals: 0, acceptances: 0 };
      byValue.set(value, entry);
      if (accepted) {
        entry.acceptances += 1;
        entry.firstAccepted ??= sighting;
        if (!entry.lastAccepted || entry.lastAccepted.sentAfter < sighting.sentAfter)
          entry.lastAccepted = sighting;
      } else {
        entry.refusals += 1;
        if (!entry.firstRefused || entry.firstRefused.answerNo > sighting.answerNo)
          entry.firstRefused = sighting;
      }
    },

    /** Whether the gateway has accepted this token value at least once in the run. */
    everAccepted(value: string): boolean {
      return (byValue.get(value)?.acceptances ?? 0) > 0;
    },

    /** The first token refused and then accepted again, if any (see the module comment). */
    contradiction(): TokenContradiction | undefined {
      for (const entry of byValue.values()) {
        const { firstRefused, lastAccepted, firstAccepted } = entry;
        if (!firstRefused || !lastAccepted || lastAccepted.sentAfter < firstRefused.answerNo) continue;
        return {
          credential: entry.credential,
          refused: firstRefused,
          acceptedAfter: lastAccepted,
          ...(firstAccepted &&
            firstAccepted.answerNo <= firstRefused.sentAfter && { acceptedBefore: firstAccepted }),
          refusals: entry.refusals,
          acceptances: entry.acceptances,
        };
      }
      return undefined;
    },

    /** How many answers accepted and refused the real tokens so far, over all values. */
    totals(): { acceptances: number; refusals: number } {
      let acceptances = 0;
      let refusals = 0;
      for (const entry of byValue.values()) {
        acceptances += entry.acceptances;
        refusals += entry.refusals;
      }
      return { acceptances, refusals };
    },
  };
}

export type TokenLedger = ReturnType<typeof createTokenLedger>;
