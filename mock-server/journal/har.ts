import { STATUS_CODES } from 'node:http';
import type { JournalEntry } from './journal.ts';

/**
 * The journal as a HAR 1.2 log (http://www.softwareishard.com/blog/har-12-spec/), which browsers' devtools,
 * proxies (Charles, Fiddler, mitmproxy) and HAR viewers open. Headers and bodies are the journal's: redacted,
 * and bodies cut at `journal.body_bytes` (then `content.comment` says so). Entries journaled without them
 * (`body_bytes: 0`) have empty header lists. A dropped connection is status 0, as browsers write it.
 */
export interface Har {
  log: {
    version: '1.2';
    creator: { name: string; version: string };
    entries: HarEntry[];
    comment?: string;
  };
}

interface NameValue {
  name: string;
  value: string;
}

interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: never[];
    headers: NameValue[];
    queryString: NameValue[];
    postData?: { mimeType: string; text: string; comment?: string };
    headersSize: -1;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: never[];
    headers: NameValue[];
    content: { size: number; mimeType: string; text?: string; comment?: string };
    redirectURL: string;
    headersSize: -1;
    bodySize: number;
  };
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number };
  comment?: string;
  _request_id: string;
  _agent?: string;
  _operation: JournalEntry['operation'];
  _fault?: string;
  _findings?: { rule: string; detail: string }[];
}

const pairs = (list: readonly [string, string][] | undefined): NameValue[] =>
  (list ?? []).map(([name, value]) => ({ name, value }));

const headerIn = (list: readonly [string, string][] | undefined, name: string) =>
  list?.find(([n]) => n.toLowerCase() === name)?.[1];

const cut = (kept: string | undefined, size: number) =>
  kept !== undefined && Buffer.byteLength(kept) < size
    ? `the journal kept the first ${Buffer.byteLength(kept)} of ${size} bytes (journal.body_bytes), secrets redacted`
    : undefined;

const decoded = (text: string) => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
};

/** A query string's parameters, decoded (HAR's `queryString`). */
const parametersOf = (query: string | undefined): NameValue[] =>
  (query ?? '')
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      return at === -1
        ? { name: decoded(pair), value: '' }
        : { name: decoded(pair.slice(0, at)), value: decoded(pair.slice(at + 1)) };
    });

const round = (ms: number) => Math.max(0, Math.round(ms * 100) / 100);

/** One journal entry as a HAR entry; `origin` (e.g. `http://127.0.0.1:8787`) when the entry has no Host. */
function harEntryOf(entry: JournalEntry, origin: string): HarEntry {
  const x = entry.exchange;
  const host = headerIn(x?.request_headers, 'host');
  const url = `${host ? `http://${host}` : origin}${entry.path}${x?.query ? `?${x.query}` : ''}`;
  const version = `HTTP/${x?.http_version ?? '1.1'}`;
  const requestType = headerIn(x?.request_headers, 'content-type');
  const responseType = headerIn(x?.response_headers, 'content-type') ?? '';
  const written = entry.written_ms ?? entry.real_ms + entry.duration_ms;
  const requestCut = cut(x?.request_body, x?.request_body_bytes ?? 0);
  const responseCut = cut(x?.response_body, x?.response_body_bytes ?? 0);
  return {
    startedDateTime: new Date(entry.at).toISOString(),
    time: round(written - entry.real_ms),
    request: {
      method: entry.method,
      url,
      httpVersion: version,
      cookies: [],
      headers: pairs(x?.request_headers),
      queryString: parametersOf(x?.query),
      ...(x?.request_body !== undefined
        ? {
            postData: {
              mimeType: requestType ?? 'application/octet-stream',
              text: x.request_body,
              ...(requestCut ? { comment: requestCut } : {}),
            },
          }
        : {}),
      headersSize: -1,
      bodySize: x?.request_body_bytes ?? -1,
    },
    response: {
      status: entry.status,
      statusText: entry.status === 0 ? '' : (STATUS_CODES[entry.status] ?? ''),
      httpVersion: version,
      cookies: [],
      headers: pairs(x?.response_headers),
      content: {
        size: x?.response_body_bytes ?? -1,
        mimeType: responseType,
        ...(x?.response_body !== undefined ? { text: x.response_body } : {}),
        ...(responseCut ? { comment: responseCut } : {}),
      },
      redirectURL: headerIn(x?.response_headers, 'location') ?? '',
      headersSize: -1,
      bodySize: x?.response_body_bytes ?? -1,
    },
    cache: {},
    timings: {
      send: 0,
      wait: round(entry.duration_ms),
      receive: round(written - entry.real_ms - entry.duration_ms),
    },
    ...(entry.status === 0 ? { comment: 'the connection was dropped (no answer)' } : {}),
    _request_id: entry.request_id,
    ...(entry.agent ? { _agent: entry.agent } : {}),
    _operation: entry.operation,
    ...(entry.fault ? { _fault: entry.fault } : {}),
    ...(entry.findings ? { _findings: entry.findings } : {}),
  };
}

/** The journal's entries (oldest first) as a HAR 1.2 log. */
export function harOf(entries: readonly JournalEntry[], origin: string, dropped = 0): Har {
  return {
    log: {
      version: '1.2',
      creator: { name: 'agent-gateway', version: '0.1.0' },
      entries: entries.map((e) => harEntryOf(e, origin)),
      ...(dropped > 0
        ? { comment: `${dropped} older exchanges were dropped from the journal (journal.capacity)` }
        : {}),
    },
  };
}

/**
 * The same HAR 1.2 log as `JSON.stringify(harOf(entries, origin, dropped))`, as text in slices: one per slice
 * of entries, made only when it is asked for (the journal's `entrySlices`), so a HAR of a big journal is
 * written with backpressure like the NDJSON export, never built whole.
 */
export async function* harTextSlices(
  slices: Iterable<readonly JournalEntry[]> | AsyncIterable<readonly JournalEntry[]>,
  origin: string,
  dropped = 0,
): AsyncGenerator<string, void, undefined> {
  const empty = JSON.stringify(harOf([], origin, dropped));
  const at = empty.indexOf('"entries":[]') + '"entries":['.length;
  let text = empty.slice(0, at);
  let first = true;
  for await (const entries of slices) {
    for (const entry of entries) {
      text += `${first ? '' : ','}${JSON.stringify(harEntryOf(entry, origin))}`;
      first = false;
    }
    yield text;
    text = '';
  }
  yield `${text}${empty.slice(at)}`;
}
