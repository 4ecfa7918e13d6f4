import { basename } from 'node:path';
import { stringify } from 'yaml';
import { ENDPOINTS, PROTECTED_ENDPOINTS, type ProtectedEndpointId } from '../../vocabulary/endpoints.ts';
import { ConfigError, loadConfig, MAX_CONFIG_FILE_BYTES } from '../config/load-config.ts';
import { bodyStart, captureBody, capturedBytes, redactHeaderPairs } from '../journal/exchange-capture.ts';
import { createSecretScanner } from '../secrets/secrets.ts';
import { FRAMING_AND_REQUEST_ID } from './replay-headers.ts';
import type { RecordedExchange } from './replay-recording.ts';
import { HEADER_VALUE, type RecordedAnswer, type ReplayInput } from './replay-schema.ts';
import { parseScenario, type ScenarioInput } from './scenarios.ts';

/*
 * A recording (replay-recording.ts) as a scenario whose replay section answers each agent the way the
 * recorded gateway did: `agent-gateway scenario from-har`.
 */

/** The agent a recording without agent names (a HAR from another tool) is filed under. */
export const UNNAMED_AGENT = 'recorded-agent';

// Headers not kept: framing (the replaying adapter writes its own), the recorded gateway's request id, and
// credentials, which a scenario meant to be shared never holds. `Date` is kept for the reader and to read an
// HTTP-date Retry-After against (the replay writes its own Date).
const NOT_KEPT = new Set<string>([...FRAMING_AND_REQUEST_ID, 'set-cookie']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
// Whole bodies up to this size are redacted and kept (a recording's own cut is `journal.body_bytes`); of a
// larger one, its start (the redaction reads only what it keeps, and a margin).
export const KEPT_BODY_BYTES = 256 * 1024;
/**
 * A JSON answer body nested deeper than this is kept as its text, not as JSON in the scenario: YAML (and
 * every reader of it) walks JSON recursively; the replay answers the same bytes either way.
 */
export const MAX_JSON_NESTING = 64;

/** How deep the arrays and objects of a JSON text nest (strings skipped), counted up to `limit + 1`. */
function jsonNesting(text: string, limit = MAX_JSON_NESTING): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // A string: to its closing quote, escapes skipped.
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++;
    } else if (c === 91 || c === 123) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c === 93 || c === 125) depth--;
  }
  return deepest;
}

interface ConvertOptions {
  /** The recording's file name, for the scenario's description and messages. */
  source: string;
  /** The scenario's name (default: `replay-` and the file's name). */
  name?: string;
  /** Which recorded agent answers which calling agent (`calling: recorded`). */
  agentMap?: Record<string, string>;
}

interface Conversion {
  scenario: ScenarioInput;
  /** What the replay will not reproduce (cut bodies, skipped exchanges), one line each. */
  warnings: string[];
  /** The scenario as YAML, with a comment header. */
  yaml: string;
}

/** The secret scan of the recording's text: every secret pattern, and the bundled agents' API keys. */
function recordingRedactor() {
  const keys = loadConfig().agents.flatMap((a) => (a.api_key ? [{ key: a.api_key, owner: a.id }] : []));
  const scan = createSecretScanner({ version: () => 0, keys: () => keys, canaries: [] });
  return (text: string) => scan(text, {}).redacted;
}

const scenarioName = (source: string) =>
  `replay-${basename(source)
    .replace(/\.[^.]*$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')}`
    .slice(0, 64)
    .replace(/-+$/, '');

const parsedJson = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
};

/** Whether a recorded body was cut: the recording says so, and what was kept is not whole JSON. */
const wasCut = (e: RecordedExchange) =>
  e.cut && e.body !== undefined && e.body.length <= KEPT_BODY_BYTES && !parsedJson(e.body).ok;

/**
 * One recorded answer, its headers and body redacted as the journal redacts them (exchange-capture.ts): the
 * secret scan, and opaque credentials that match no secret pattern (a session id, a CSRF token, a signed
 * URL's signature) told by the name they go by, wherever they sit (secrets/credential-redaction.ts).
 */
function answerOf(
  e: RecordedExchange,
  start: number,
  redact: (text: string) => string,
  warnings: string[],
): RecordedAnswer {
  const headers: Record<string, string> = {};
  for (const [name, value] of redactHeaderPairs((e.headers ?? []).flat(), redact)) {
    const lower = name.toLowerCase();
    // HTTP/2 pseudo-headers (`:status`) and names no HTTP/1.1 answer can carry are not headers to replay.
    if (NOT_KEPT.has(lower) || !HEADER_NAME.test(lower)) continue;
    // A value no HTTP/1.1 answer can carry (a line break, a character beyond Latin-1) would fail the answer.
    if (!HEADER_VALUE.test(value)) {
      warnings.push(
        `left out header ${lower} of ${e.place}: its value has a character no HTTP/1.1 header can carry (a line break, or one beyond Latin-1)`,
      );
      continue;
    }
    if (lower === 'date' && Number.isNaN(Date.parse(value))) continue;
    // A repeated header is one list, as a reader of the answer sees it.
    headers[lower] = headers[lower] === undefined ? value : `${headers[lower]}, ${value}`;
  }
  // Only the start of a large body is read (and redacted): a body of hundreds of MB costs what it keeps.
  const total = e.body === undefined ? 0 : Buffer.byteLength(e.body);
  const taken = e.body === undefined ? undefined : bodyStart(e.body, capturedBytes(KEPT_BODY_BYTES));
  const body = captureBody(taken, KEPT_BODY_BYTES, redact, undefined, total);
  if (body !== undefined && total > Buffer.byteLength(body) && total > KEPT_BODY_BYTES)
    warnings.push(
      `the answer body of ${e.place} is ${total} bytes: the scenario keeps its first ${KEPT_BODY_BYTES} (the replay answers that part)`,
    );
  const answer: RecordedAnswer = {
    operation: e.operation as ProtectedEndpointId,
    at_ms: Math.max(0, Math.round(e.at - start)),
    status: e.status,
    headers,
  };
  if (body === undefined) return answer;
  // A body nested too deep for YAML is kept as its text (the same bytes are answered).
  if (jsonNesting(body) > MAX_JSON_NESTING) {
    warnings.push(
      `the answer body of ${e.place} nests deeper than ${MAX_JSON_NESTING} arrays or objects: kept as text, not as JSON`,
    );
    return { ...answer, body };
  }
  // A whole JSON body parses (some tools write a HAR's content.size wrong); a cut one almost never does.
  const json = parsedJson(body);
  return json.ok ? { ...answer, json: json.value } : { ...answer, body };
}

/**
 * Why an exchange is not replayed, if it is not: another endpoint; no agent (no token, which the replaying
 * gateway refuses itself); or a 401, as the replaying gateway judges the tokens it mints itself (a recorded
 * 401 served to a valid token would put every later answer one place off).
 */
function leftOut(e: RecordedExchange, agent: string | undefined): string | undefined {
  if (!(PROTECTED_ENDPOINTS as readonly string[]).includes(e.operation)) return e.operation;
  const { method } = ENDPOINTS[e.operation as ProtectedEndpointId];
  // A CORS preflight, a GET answered 405: the replaying gateway answers other methods itself.
  if (e.method !== undefined && e.method !== method) return `${e.operation} by another method than ${method}`;
  if (agent === undefined) return `${e.operation} without an agent (no valid token)`;
  if (e.status === 401) return `${e.operation} answered 401 (the replaying gateway judges its own tokens)`;
  // An interim answer (103 Early Hints...): the agent's answer is the final one, recorded next.
  if (e.status >= 100 && e.status < 200)
    return `${e.operation} answered ${e.status} (an interim answer, not the final one)`;
  return undefined;
}

/**
 * The recorded agent of each exchange of a HAR from another tool (no agent names): one agent per identity
 * token, told apart by its fingerprint, in the order they first asked; `recorded-agent` when there is one.
 */
function unnamedAgents(exchanges: readonly RecordedExchange[], warnings: string[]) {
  const byToken = new Map<string, string>();
  const tokens = [...exchanges]
    .sort((a, b) => a.at - b.at)
    .flatMap((e) => (typeof e.token === 'string' ? [e.token] : []));
  for (const token of new Set(tokens)) byToken.set(token, `${UNNAMED_AGENT}-${byToken.size + 1}`);
  if (byToken.size > 1)
    warnings.push(
      `${byToken.size} agents told apart by their tokens: ${[...byToken].map(([token, agent]) => `${agent} (${token})`).join(', ')}; map the agents calling the replay to them with --agent-map`,
    );
  return (e: RecordedExchange) =>
    typeof e.token !== 'string' ? undefined : byToken.size > 1 ? byToken.get(e.token) : UNNAMED_AGENT;
}

/** `; the largest answer body is entry 3's (2358903 bytes)`, when one body is a large part of the file. */
function largestBody(kept: readonly RecordedExchange[]): string {
  let largest: RecordedExchange | undefined;
  for (const e of kept) if ((e.body?.length ?? 0) > (largest?.body?.length ?? 0)) largest = e;
  const bytes = largest?.body === undefined ? 0 : Buffer.byteLength(largest.body);
  return bytes < MAX_CONFIG_FILE_BYTES / 4
    ? ''
    : `; the largest answer body is ${largest?.place}'s (${bytes} bytes; a scenario keeps at most ${KEPT_BODY_BYTES} of one)`;
}

/**
 * The scenario replaying a recording: per recorded agent, its answers to whoami, web search and web fetch in
 * the order they were given, each with its time after the recording's start, status, headers and body
 * (redacted); the virtual clock starts at the recording's start and runs. Other exchanges (health, the
 * identity provider, unknown paths, requests without an agent) are left out and counted in `warnings`.
 */
export function scenarioFromRecording(
  exchanges: readonly RecordedExchange[],
  options: ConvertOptions,
): Conversion {
  const named = exchanges.some((e) => e.agent !== undefined);
  const warnings: string[] = [];
  const skipped = new Map<string, number>();
  const kept: (RecordedExchange & { agent: string })[] = [];
  const unnamed = unnamedAgents(exchanges, warnings);
  for (const e of exchanges) {
    const agent = named ? e.agent : unnamed(e);
    const why = leftOut(e, agent);
    if (why === undefined && agent !== undefined) kept.push({ ...e, agent });
    else if (why !== undefined) skipped.set(why, (skipped.get(why) ?? 0) + 1);
  }
  if (kept.length === 0)
    throw new ConfigError(
      options.source,
      [
        {
          path: '',
          message: `no answer to whoami, web search or web fetch of a named agent to replay (${exchanges.length} exchange(s) in the file)`,
        },
      ],
      'recording',
    );
  for (const [why, count] of skipped) warnings.push(`left out ${count} exchange(s): ${why} (not replayed)`);
  const elsewhere = kept.filter((e) => e.elsewhere);
  if (elsewhere.length > 0)
    warnings.push(
      `${elsewhere.length} answer body(ies) are in files beside the HAR (_file), e.g. ${elsewhere[0]?.place}: the replay answers them with no body; record with recordHar content: 'embed' to keep them in the HAR`,
    );
  const cut = kept.filter(wasCut);
  if (cut.length > 0)
    warnings.push(
      `${cut.length} answer body(ies) were cut by the recording (journal.body_bytes), e.g. ${cut[0]?.place}: the replay answers the part kept; record with a larger --journal-body-bytes to keep whole bodies`,
    );
  if (kept.some((e) => e.status !== 0 && (e.headers === undefined || e.headers.length === 0)))
    warnings.push(
      'some answers were recorded without headers (journal.body_bytes: 0): their Retry-After and RateLimit fields cannot be replayed',
    );
  const ordered = kept.map((e, i) => ({ e, i })).sort((a, b) => a.e.at - b.e.at || a.i - b.i);
  const start = ordered[0]?.e.at as number;
  const redact = recordingRedactor();
  const agents: Record<string, RecordedAnswer[]> = {};
  for (const { e } of ordered) {
    agents[e.agent] ??= [];
    agents[e.agent]?.push(answerOf(e, start, redact, warnings));
  }
  const recordedAt = new Date(start).toISOString();
  const replay: ReplayInput = {
    source: basename(options.source),
    recorded_at: recordedAt,
    agent_map: options.agentMap ?? {},
    agents,
  };
  const names = Object.keys(agents);
  const scenario: ScenarioInput = {
    name: options.name ?? scenarioName(options.source),
    description: `Replays ${basename(options.source)}: ${kept.length} answer(s) to ${names.length} recorded agent(s) (${names.join(', ')}), recorded from ${recordedAt}. ${names.length === 1 ? 'Every agent' : 'Each agent'} calling gets ${names.length === 1 ? 'them' : 'its recorded agent’s'} in order per endpoint; later requests get the reference gateway's answers.`,
    clock: { frozen: false, start: recordedAt },
    replay,
  };
  parseScenario(scenario, options.source);
  const yaml = `${[
    `# Converted by agent-gateway scenario from-har from ${basename(options.source)}.`,
    '# Serve it: npx agent-gateway serve --scenario THIS_FILE. Format: docs/qa.md#replaying-a-recorded-incident',
    ...warnings.map((w) => `# Note: ${w}`),
  ].join('\n')}\n${stringify(scenario, { lineWidth: 0 })}`;
  if (Buffer.byteLength(yaml) > MAX_CONFIG_FILE_BYTES)
    throw new ConfigError(
      options.source,
      [
        {
          path: '',
          message: `the scenario would be ${Buffer.byteLength(yaml)} bytes, over the ${MAX_CONFIG_FILE_BYTES} a scenario file may hold${largestBody(kept)}: export a slice of the journal (--agent, --since), or of the HAR's entries, and convert that`,
        },
      ],
      'recording',
    );
  return { scenario, warnings, yaml };
}
