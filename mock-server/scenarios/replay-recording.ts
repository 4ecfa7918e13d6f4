import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { z } from 'zod';
import { ENDPOINTS, type JournalOperation, PROTECTED_ENDPOINTS } from '../../vocabulary/endpoints.ts';
import { IDENTITY_HEADER_KEY } from '../../vocabulary/identity-header.ts';
import { ConfigError, describeIssues } from '../config/load-config.ts';
import { tokenFingerprint } from '../identity/token-fingerprint.ts';

/*
 * A recording, read: a HAR 1.2 file (the proxy's `GET /__admin/export?format=har`, or any browser, proxy or
 * tool's) or the journal's NDJSON export (`GET /__admin/journal/export`), each validated with zod, as the
 * list of exchanges the converter (replay-convert.ts) turns into a scenario's replay section.
 */

/** One recorded exchange, whatever file it came from. */
export interface RecordedExchange {
  /** Where it is in the file, for messages: `entry 3` (HAR) or `line 3` (NDJSON). */
  place: string;
  agent?: string;
  /**
   * The fingerprint of the request's identity token (a HAR from another tool, which names no agent: it tells
   * its agents apart), false when it carried none; undefined when the recording names its agents.
   */
  token?: string | false;
  /** The request's method, when the recording has it (a HAR). */
  method?: string;
  operation: JournalOperation;
  /** When it was asked, ms since the epoch (the recorded gateway's clock). */
  at: number;
  status: number;
  /** The answer's headers as recorded (already redacted in our exports), undefined when none were kept. */
  headers?: [string, string][];
  body?: string;
  /** The recording kept only the start of the body (`journal.body_bytes`). */
  cut: boolean;
  /** The body is in a file beside the HAR (Playwright's `_file`), not in the recording. */
  elsewhere?: boolean;
}

const header = z.looseObject({ name: z.string(), value: z.string() });
const time = z.string().refine((t) => !Number.isNaN(Date.parse(t)), 'must be an ISO 8601 date-time');

const harEntrySchema = z.looseObject({
  startedDateTime: time,
  request: z.looseObject({
    method: z.string(),
    url: z.string().min(1),
    headers: z.array(header).default([]),
  }),
  response: z.looseObject({
    // Some tools write -1 for a request that got no answer.
    status: z.number().int().min(-1).max(599),
    headers: z.array(header).default([]),
    content: z
      .looseObject({
        // Some tools write null for what they have not (Playwright's encoding).
        size: z.number().nullish(),
        text: z.string().nullish(),
        encoding: z.string().nullish(),
        // Playwright's recordHar with content: 'attach': the body is in this file beside the HAR.
        _file: z.string().nullish(),
      })
      .default({}),
  }),
  _agent: z.string().min(1).optional(),
  _operation: z.string().optional(),
});
const harSchema = z.looseObject({
  log: z.looseObject({ version: z.string().optional(), entries: z.array(harEntrySchema) }),
});

const journalLineSchema = z.looseObject({
  seq: z.number().int(),
  at: z.number(),
  path: z.string(),
  operation: z.string(),
  status: z.number().int().min(0).max(599),
  agent: z.string().min(1).optional(),
  code: z.string().optional(),
  retry_after: z.string().optional(),
  exchange: z
    .looseObject({
      response_headers: z.array(z.tuple([z.string(), z.string()])),
      response_body: z.string().optional(),
      response_body_bytes: z.number(),
    })
    .optional(),
});

const OPERATION_IDS = new Set<string>(Object.keys(ENDPOINTS));

/** The endpoint a recorded URL path was: the journal's own name, else by the end of its path (a prefix is the target's base). */
function operationOf(path: string, named?: string): JournalOperation {
  if (named && (OPERATION_IDS.has(named) || named === 'other')) return named as JournalOperation;
  for (const id of PROTECTED_ENDPOINTS) if (path.endsWith(ENDPOINTS[id].path)) return id;
  for (const id of Object.keys(ENDPOINTS) as (keyof typeof ENDPOINTS)[])
    if (path.endsWith(ENDPOINTS[id].path)) return id;
  return 'other';
}

const pathOf = (url: string) => {
  try {
    return new URL(url, 'http://recorded.invalid').pathname;
  } catch {
    return url;
  }
};

/** The fingerprint of the identity token among a request's headers (never the token itself), or false. */
function tokenOf(headers: readonly { name: string; value: string }[]): string | false {
  const token = headers.find((h) => h.name.toLowerCase() === IDENTITY_HEADER_KEY)?.value.trim();
  return token ? tokenFingerprint(token) : false;
}

// Most a compressed body is inflated to (a recording file is read up to 256 MiB; no bomb past that).
const MAX_INFLATED_BYTES = 64 * 1024 * 1024;
const INFLATE = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
} as const;

/**
 * A HAR body's text. Base64 content is decoded; if it is still compressed as the answer's Content-Encoding
 * says (some tools save the bytes as they came), it is inflated; bytes that do not inflate are kept as they are.
 */
function harBody(
  text: string | undefined,
  encoding: string | undefined,
  headers: readonly { name: string; value: string }[],
) {
  if (text === undefined || encoding !== 'base64') return text;
  const bytes = Buffer.from(text, 'base64');
  const coding = headers
    .find((h) => h.name.toLowerCase() === 'content-encoding')
    ?.value.trim()
    .toLowerCase();
  const inflate = coding === undefined ? undefined : INFLATE[coding as keyof typeof INFLATE];
  if (inflate)
    try {
      const inflated = inflate(bytes, { maxOutputLength: MAX_INFLATED_BYTES }).toString('utf8');
      // Decoded bytes that happen to inflate give binary, not text: keep what was saved.
      if (!inflated.includes('\ufffd') && !inflated.includes('\u0000')) return inflated;
    } catch {
      // Already decoded (the usual case: browsers save the decoded body), or not what it says.
    }
  return bytes.toString('utf8');
}

function fromHar(har: z.output<typeof harSchema>): RecordedExchange[] {
  return har.log.entries.map((e, i) => {
    const { content } = e.response;
    const body = harBody(content.text ?? undefined, content.encoding ?? undefined, e.response.headers);
    const kept = body === undefined ? 0 : Buffer.byteLength(body);
    return {
      place: `entry ${i + 1}`,
      agent: e._agent,
      token: tokenOf(e.request.headers),
      method: e.request.method.toUpperCase(),
      operation: operationOf(pathOf(e.request.url), e._operation),
      at: Date.parse(e.startedDateTime),
      status: Math.max(0, e.response.status),
      headers: e.response.headers.map((h) => [h.name, h.value] as [string, string]),
      body,
      cut: typeof content.size === 'number' && content.size > kept && body !== undefined,
      elsewhere: body === undefined && typeof content._file === 'string',
    };
  });
}

function fromNdjson(text: string, source: string): RecordedExchange[] {
  const exchanges: RecordedExchange[] = [];
  const issues: { path: string; message: string }[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '' || issues.length >= 10) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      issues.push({ path: `line ${i + 1}`, message: 'not JSON (a HAR file is one JSON object with a log)' });
      return;
    }
    const parsed = journalLineSchema.safeParse(value);
    if (!parsed.success) {
      for (const issue of describeIssues(parsed.error))
        issues.push({ path: `line ${i + 1}${issue.path ? `: ${issue.path}` : ''}`, message: issue.message });
      return;
    }
    const e = parsed.data;
    const x = e.exchange;
    const kept = x?.response_body === undefined ? 0 : Buffer.byteLength(x.response_body);
    exchanges.push({
      place: `line ${i + 1}`,
      agent: e.agent,
      operation: operationOf(e.path, e.operation),
      at: e.at,
      status: e.status,
      // Journaled without the exchange (journal.body_bytes 0): its Retry-After and code, as the journal has them.
      headers: x?.response_headers ?? (e.retry_after ? [['retry-after', e.retry_after]] : undefined),
      body: x ? x.response_body : e.code ? JSON.stringify({ code: e.code }) : undefined,
      cut: x !== undefined && x.response_body_bytes > kept,
    });
  });
  if (issues.length > 0) throw new ConfigError(source, issues, 'recording');
  return exchanges;
}

/**
 * The exchanges of a recording's text: a HAR 1.2 file (one JSON object with `log.entries`) or the journal's
 * NDJSON export (one entry a line). A file that is neither is a ConfigError naming what is wrong and where.
 */
export function readRecording(text: string, source: string): RecordedExchange[] {
  const trimmed = text.trim();
  if (trimmed === '')
    throw new ConfigError(source, [{ path: '', message: 'the file is empty' }], 'recording');
  let whole: unknown;
  try {
    whole = JSON.parse(trimmed);
  } catch {
    whole = undefined;
  }
  if (typeof whole === 'object' && whole !== null && 'log' in whole) {
    const parsed = harSchema.safeParse(whole);
    if (!parsed.success)
      throw new ConfigError(
        source,
        describeIssues(parsed.error)
          .slice(0, 10)
          .map((i) => ({ path: i.path, message: i.message })),
        'recording',
      );
    return fromHar(parsed.data);
  }
  if (!trimmed.startsWith('{'))
    throw new ConfigError(
      source,
      [
        {
          path: '',
          message:
            'neither a HAR 1.2 file (a JSON object with log.entries) nor the journal NDJSON export (one JSON entry a line)',
        },
      ],
      'recording',
    );
  return fromNdjson(trimmed, source);
}
