import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { JournalOperation } from '../../vocabulary/endpoints.ts';
import type { CallContext } from '../http/context.ts';
import type { AgentRegistry } from '../identity/agent-registry.ts';
import type { Fault } from '../scenarios/faults.ts';
import type { Collector } from './wire.ts';

/*
 * The agents' own API keys, as the proxy can know them. Over HTTP and in process the gateway is the identity
 * provider: it knows every agent's key, and a leak of it is `own_api_key`. The proxy sits in front of a
 * gateway whose agents it does not know, so it learns what it can:
 * - keys declared once, in the proxy's options (`apiKeys`, `apiKeysFile`; the CLI's `--api-key` and
 *   `--api-keys-file`), or as agents of its config;
 * - a key the agent posts to the token endpoint (`POST /idp/token`) through the proxy: the key from the
 *   request, the token (and, when the answer names it, the agent) from the answer; the agent of a token the
 *   answer does not name is learned when the token is first named (its whoami).
 * Known keys go into the proxy's own agent registry, which its secret scan reads (so `own_api_key`, pieces
 * of the key and a key split across two requests are found as over HTTP). A request of an agent whose key
 * is unknown when it is scanned is marked `own_key_unknown`: the client report then says its own-key check
 * was not observed, never that it passed. Keys and tokens live only in memory, here; the journal keeps none.
 */

/** Agent id to API key, as the proxy's options declare them. */
export const declaredKeysSchema = z
  .record(z.string().min(1).max(200), z.string().min(8, 'an API key has 8 characters or more').max(1000))
  .describe(
    "agents' own API keys (agent id to key), so that the proxy recognises a leak of an agent's own key",
  );

export type DeclaredKeys = z.output<typeof declaredKeysSchema>;

/**
 * Reads a file of keys: a JSON object (`{"agent-id": "key"}`) or lines `agent-id=key` (blank lines and
 * `#` comments ignored). Throws a clear error naming the file and the line.
 */
export function readKeysFile(file: string): DeclaredKeys {
  const text = readFileSync(file, 'utf8');
  if (text.trimStart().startsWith('{')) return parseKeys(JSON.parse(text), file);
  const keys: Record<string, string> = {};
  text.split(/\r?\n/).forEach((line, k) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const at = trimmed.indexOf('=');
    if (at <= 0) throw new Error(`${file} line ${k + 1}: expected agent-id=key`);
    keys[trimmed.slice(0, at).trim()] = trimmed.slice(at + 1).trim();
  });
  return parseKeys(keys, file);
}

function parseKeys(value: unknown, from: string): DeclaredKeys {
  const parsed = declaredKeysSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new Error(
    `${from}: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
  );
}

/** The token endpoint, whose exchanges teach the proxy a key; its bodies are read for that. */
export const TOKEN_OPERATION: JournalOperation = 'idp.token';

const fieldOf = (text: string | undefined, names: readonly string[]): string | undefined => {
  if (text === undefined) return undefined;
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    for (const name of names) if (typeof body?.[name] === 'string' && body[name] !== '') return body[name];
  } catch {
    // Not JSON: nothing to learn.
  }
  return undefined;
};

// Tokens whose key is known, and whose agent is not yet: bounded, oldest forgotten first.
const MOST_PENDING_TOKENS = 1024;

/**
 * Whether an armed fault may strike `operation`: the proxy must then know whose a request is before it
 * decides, as the gateway does (it knows the agent of every token), so that the same fault hits the same
 * requests on every path and its answer is journaled under the agent. (Otherwise the proxy names a token by
 * its first whoami's own answer: a fault armed for the agent would let that whoami through and strike the
 * agent's next request, and a fault answering that whoami would leave the token named by its fingerprint.)
 * Only while such a fault is armed does the proxy ask the target's whoami for a new token's agent.
 */
export const faultArmedFor = (faults: readonly Fault[], operation: string) =>
  faults.some((f) => !f.match.operation || f.match.operation === operation);

/**
 * The proxy's knowledge of its agents' own keys, over its registry: `apiKeys` and the keys of `apiKeysFile`
 * (its options) first.
 */
export function createLearnedKeys(
  registry: AgentRegistry,
  options: { apiKeys?: DeclaredKeys; apiKeysFile?: string } = {},
) {
  const declared = {
    ...(options.apiKeysFile ? readKeysFile(options.apiKeysFile) : {}),
    ...parseKeys(options.apiKeys ?? {}, 'apiKeys'),
  };
  const keyOfToken = new Map<string, string>();

  /** Puts `key` in the registry as `agent`'s (replacing another key the id had, or another holder of it). */
  const learn = (agent: string, key: string) => {
    if (registry.get(agent)?.apiKey === key) return;
    const others = registry.list().filter((a) => a.id !== agent && a.apiKey !== key);
    registry.restore([
      ...others,
      {
        id: agent,
        name: agent,
        apiKey: key,
        tier: 'learned',
        allowlist: [],
        disabled: false,
        tokenGeneration: 0,
        incarnation: 'learned',
      },
    ]);
  };
  for (const [agent, key] of Object.entries(declared)) learn(agent, key);

  return {
    learn,
    /**
     * What one recorded exchange teaches and what its entry must say, called before its texts are scanned:
     * a token exchange's key (and agent), the agent a token is now known to be, and whether the agent's own
     * key is unknown for this request (`own_key_unknown`). Returns the token a token exchange minted and the
     * agent it was minted for, when both are known: whoever saw the mint knows whose the token is, even once
     * the target refuses it (expired, revoked) and its whoami can no longer name it.
     */
    onRecord(
      ctx: CallContext,
      token: string | undefined,
      exchange: {
        operation: JournalOperation;
        status: number;
        request?: string | Collector;
        answer?: string;
      },
    ): { token: string; agent: string } | undefined {
      let mint: { token: string; agent: string } | undefined;
      if (exchange.operation === TOKEN_OPERATION && exchange.status >= 200 && exchange.status < 300) {
        const { request } = exchange;
        const text =
          typeof request === 'string' || !request?.whole ? request : request.bytes().toString('utf8');
        const key = fieldOf(text as string | undefined, ['api_key', 'apiKey', 'key', 'client_secret']);
        const minted = fieldOf(exchange.answer, ['token', 'access_token', 'id_token']);
        const agent = fieldOf(exchange.answer, ['agent_id', 'agentId', 'agent', 'sub', 'client_id']);
        // The exchange is its agent's, as the gateway's identity provider journals it.
        const holder = agent ?? (key ? registry.findByApiKey(key)?.id : undefined);
        if (holder !== undefined) ctx.note.agent ??= holder;
        if (holder !== undefined && minted) mint = { token: minted, agent: holder };
        if (key && agent) learn(agent, key);
        else if (key && minted) {
          if (keyOfToken.size >= MOST_PENDING_TOKENS)
            keyOfToken.delete(keyOfToken.keys().next().value as string);
          keyOfToken.set(minted, key);
        }
      }
      const agent = ctx.note.agent;
      if (token && agent) {
        const key = keyOfToken.get(token);
        if (key) {
          keyOfToken.delete(token);
          learn(agent, key);
        }
      }
      if (agent && registry.get(agent) === undefined) ctx.note.own_key_unknown = true;
      return mint;
    },
  };
}

export type LearnedKeys = ReturnType<typeof createLearnedKeys>;
