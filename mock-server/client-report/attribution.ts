import type { JournalEntry } from '../journal/journal.ts';
import { isUnnamedAgent } from '../journal/journal-ring.ts';

/*
 * Every request is somebody's. The request path names most (the token, and for a request no stage identified,
 * the token or the agent's own API key it carries: `pipeline/attribute.ts`); what it could not name, the
 * report ties by the connection it came on: an HTTP/1.1 connection is one client's, so a request that came
 * on a connection which carried one agent's named requests, and no other agent's, is that agent's (a token
 * cached from an earlier run, refused before the agent refreshed it, through the proxy as on the gateway).
 * What stays nobody's is counted, with the reason, in every report.
 */

/** Requests of the journal that belong to no agent, and why (`ClientReport.unattributed`). */
export interface Unattributed {
  requests: number;
  reasons: { reason: string; requests: number }[];
}

/** `agentRequests`' answer: the agent's requests, and those that stay nobody's (their count and reasons). */
export interface AgentRequests {
  entries: JournalEntry[];
  unattributed?: Unattributed;
  /** The requests that stay nobody's. */
  nobodys: JournalEntry[];
}

/** Why a request no agent was named for stayed nobody's. */
function reasonOf(e: JournalEntry): string {
  if (e.agent !== undefined)
    return 'a token the target never named (its whoami refused it), on a connection no named agent used';
  if (e.token !== undefined)
    return 'a token this gateway did not sign (or could not verify without a wait), on a connection no named agent used';
  return e.connection === undefined
    ? 'neither a token nor an API key of a known agent, and no connection to tie it to'
    : 'neither a token nor an API key of a known agent, on a connection no named agent used';
}

/**
 * One agent's requests among `entries` (those after `since`): those named for it, and those named for nobody
 * that came on a connection only it used (marked `attributed_by: 'connection'`); and the requests that stay
 * nobody's, with the reasons.
 */
export function agentRequests(entries: readonly JournalEntry[], agent: string, since: number): AgentRequests {
  const connectionAgents = new Map<number, string | null>();
  // Connections on which the proxy knew the agent's own key (for the requests it ties: `own_key_unknown`).
  const keyKnownOn = new Set<number>();
  for (const e of entries) {
    // A refused token's claim (`token_claim`) is the weakest naming: it never speaks for its connection.
    if (e.connection === undefined || isUnnamedAgent(e.agent) || e.attributed_by === 'token_claim') continue;
    const known = connectionAgents.get(e.connection);
    if (known === undefined) connectionAgents.set(e.connection, e.agent as string);
    else if (known !== e.agent) connectionAgents.set(e.connection, null);
    if (!e.own_key_unknown) keyKnownOn.add(e.connection);
  }
  const own: JournalEntry[] = [];
  const reasons = new Map<string, number>();
  const nobodys: JournalEntry[] = [];
  for (const e of entries) {
    if (e.seq <= since) continue;
    // A token naming one agent, resent on a connection that carried another's named requests only: the
    // connection's agent sent it (its token cache mixed agents up), not the agent the token names.
    const sender =
      e.attributed_by === 'token_claim' ? connectionAgents.get(e.connection as number) : undefined;
    if (typeof sender === 'string' && sender !== e.agent) {
      if (sender === agent) own.push({ ...e, agent, attributed_by: 'connection' });
      continue;
    }
    if (e.agent === agent) {
      own.push(e);
      continue;
    }
    if (!isUnnamedAgent(e.agent)) continue;
    const holder = e.connection === undefined ? undefined : connectionAgents.get(e.connection);
    if (holder === agent) {
      // Scanned before its agent was known: every key the proxy knew was looked for, the agent's own among
      // them when its other requests on the connection show the proxy knew it.
      const { own_key_unknown: _, ...rest } = e;
      const keyKnown = e.connection !== undefined && keyKnownOn.has(e.connection);
      own.push({ ...(keyKnown ? rest : e), agent, attributed_by: 'connection' });
    } else if (!holder) {
      nobodys.push(e);
      const reason = reasonOf(e);
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
  }
  own.sort((a, b) => a.seq - b.seq);
  if (nobodys.length === 0) return { entries: own, nobodys };
  return {
    entries: own,
    nobodys,
    unattributed: {
      requests: nobodys.length,
      reasons: [...reasons].map(([reason, requests]) => ({ reason, requests })),
    },
  };
}
