import type { CallContext } from '../http/context.ts';
import { claimedAgent } from '../identity/token-codec.ts';
import { tokenFingerprint } from '../identity/token-fingerprint.ts';
import { headerList } from './header-list.ts';
import { tokenOf } from './identify.ts';

/*
 * Every request is somebody's (the client report grades an agent by its requests). Most are named by the
 * identify stage; the rest here, when they are recorded: the health check (answered before identity), an
 * unrouted path, a call refused before its token was read. Then, at read time, the client report ties a
 * request to the agent its connection carried (`client-report/attribution.ts`).
 */

/** How a request the identify stage did not name was tied to its agent (the journal's `attributed_by`). */
export type AttributedBy = 'token' | 'api_key' | 'token_claim' | 'connection';

/**
 * Names the agent of a request no stage named: the agent of the token it carries (accepted or refused but
 * genuinely signed, as the identify stage names it; verified only when that needs no wait), else the agent
 * whose own API key it carries in its query string or a header (the key names its agent), else the known
 * agent a token in this gateway's format names though another secret signed it, issued before this gateway
 * started (one cached from an earlier run: `token_claim`). On every path alike, in process too, where there
 * is no connection to tie it by.
 */
export function attributeRequest(ctx: CallContext): void {
  const { runtime, note } = ctx;
  const token = tokenOf(ctx);
  if (token && runtime.verifier) {
    const result = runtime.verifier.verify(token);
    // A verifier that must wait (a remote identity provider) is not waited for here; its answer, or its
    // failure (an unreachable provider), is let go, never left an unhandled rejection.
    if (result instanceof Promise) result.catch(() => undefined);
    else {
      const agent = result.ok ? result.identity.agentId : result.agentId;
      if (agent !== undefined) {
        note.agent = agent;
        note.token ??= tokenFingerprint(token);
        note.attributed_by = 'token';
        return;
      }
    }
  }
  const owner = keyOwner(ctx);
  if (owner !== undefined) {
    note.agent = owner;
    note.attributed_by = 'api_key';
    return;
  }
  // Only a token issued before this gateway started: one altered from a token it minted (a tester's probe)
  // stays to be tied by its connection, or nobody's.
  const claimed = token ? claimedAgent(token) : undefined;
  if (claimed === undefined || runtime.startedAt === undefined || claimed.issuedAt >= runtime.startedAt)
    return;
  if (!runtime.registry?.get(claimed.agent)) return;
  note.agent = claimed.agent;
  note.token ??= tokenFingerprint(token as string);
  note.attributed_by = 'token_claim';
}

// Values shorter than this are no API key (the registry's keys are longer); longer ones are not looked up.
const SHORTEST_KEY = 8;
const LONGEST_KEY = 512;

/** The agent whose API key a value of the request's query string or headers is (`Bearer <key>` too). */
function keyOwner(ctx: CallContext): string | undefined {
  const { registry } = ctx.runtime;
  if (!registry) return undefined;
  const ownerOf = (value: string) => {
    const key = value.trim().replace(/^(?:bearer|token|apikey)\s+/i, '');
    if (key.length < SHORTEST_KEY || key.length > LONGEST_KEY) return undefined;
    return registry.findByApiKey(key)?.id;
  };
  const { query } = ctx.request;
  if (query)
    for (const [, value] of new URLSearchParams(query)) {
      const owner = ownerOf(value);
      if (owner !== undefined) return owner;
    }
  const headers = headerList(ctx.request);
  for (let i = 1; i < headers.length; i += 2) {
    const owner = ownerOf(headers[i] as string);
    if (owner !== undefined) return owner;
  }
  return undefined;
}
