import { IDENTITY_HEADER_KEY } from '../../vocabulary/identity-header.ts';
import { journalFingerprint } from '../hash.ts';
import type { BodyTool, CallContext, OutgoingText } from '../http/context.ts';
import { parseJsonBodyAsSent } from '../http/read-body.ts';
import type { ReadBack } from '../journal/entry-record.ts';
import { CREDENTIAL_HEADERS } from '../journal/exchange-capture.ts';
import type { JournalNote } from '../journal/journal-entry.ts';
import type { RecordReader, RecordWriter } from '../journal/record-bytes.ts';
import type { FrozenScan, SplitParts } from '../secrets/secrets.ts';
import type { EntryReadings } from '../store/state-port.ts';
import { requestKey } from '../tools/request-meaning.ts';
import { headerList } from './header-list.ts';
import { tokenOf } from './identify.ts';
import {
  addBodySecrets,
  addFound,
  addOutgoingText,
  placeNameWith,
  SHORTEST_SECRET,
} from './outgoing-text.ts';

/*
 * What only a reader of the journal needs (the client report, the journal API, exports), worked out when an
 * entry is first read, not on the request path (issue 35): the secrets in the call URL and in the headers,
 * and for an accepted tool body its fingerprint, its meaning (`request_key`) and the secrets in its other
 * strings; and the query or URL it sent out, its secrets and credentials redacted (the memory of secrets
 * split across two of an agent's texts moves on in their order on the path: `SecretScanner.outgoing`). The request path takes the texts (a reference to the body's bytes, the few header values that
 * could hold a secret) in one small object; the readings are made from them with the secrets known at the
 * call (`frozen`), so what is found does not depend on when it is read. On a shared store they are made at
 * once (the store never holds anything unredacted).
 */

// Values of fixed-format headers that are protocol tokens only, and so hold no secret: skipped by the scan.
// Any other value of these headers is scanned, as is every other header (user-agent too).
const MEDIA_TYPES = String.raw`(?:\*/\*|(?:application|text)/(?:json|plain|html|\*|x-www-form-urlencoded|event-stream|problem\+json))`;
const Q = String.raw`(?:\s*;\s*q=[01](?:\.\d{1,3})?)?`;
const PROTOCOL_VALUES = new Map<string, RegExp>(
  Object.entries({
    accept: new RegExp(`^${MEDIA_TYPES}${Q}(?:\\s*,\\s*${MEDIA_TYPES}${Q})*$`, 'i'),
    'content-type': new RegExp(`^${MEDIA_TYPES}(?:\\s*;\\s*charset=(?:utf-8|"utf-8"))?$`, 'i'),
    'accept-encoding':
      /^(?:(?:gzip|deflate|br|zstd|identity|\*)(?:\s*;\s*q=[01](?:\.\d{1,3})?)?(?:\s*,\s*|$))+$/i,
    connection: /^(?:keep-alive|close|upgrade)$/i,
    'content-length': /^\d{1,12}$/,
  }),
);
const isProtocolToken = (name: string, value: string) => PROTOCOL_VALUES.get(name)?.test(value) === true;

/** An accepted tool body, as its readings need it: the tool, its bytes, when it was sent, the scan then. */
interface BodyInputs {
  readonly tool: BodyTool;
  readonly bytes: Uint8Array;
  readonly at: number;
  readonly sentAt: number;
  readonly scan: FrozenScan;
}

/** The inputs of one entry's readings, taken on the request path: one object, its methods shared. */
class Readings implements EntryReadings {
  constructor(
    /** The secrets known when the call was recorded (for its URL and headers). */
    private readonly scan: FrozenScan,
    private readonly token: string | undefined,
    private readonly agentId: string | undefined,
    private readonly url: string,
    /** Header values that could hold a secret: name, value, position among the headers; repeated. */
    private readonly headers: readonly (string | number)[] | undefined,
    private readonly body: BodyInputs | undefined,
    /** The query or URL the call sent out (`noteOutgoingText`). */
    private readonly outgoing: OutgoingText | undefined,
  ) {}

  /**
   * Adds the readings to the entry, its places in the order a call lists them: the query or URL, the
   * body's other strings, then the call URL and headers.
   */
  apply(entry: JournalNote): void {
    const own = { token: this.token, agentId: this.agentId };
    const { body, outgoing } = this;
    if (outgoing) {
      const { field, text, before, scan } = outgoing;
      addOutgoingText(entry, field, scan(text, outgoing.own, before));
    }
    if (body) {
      const { value, raw } = parseJsonBodyAsSent(body.bytes, body.tool.schema);
      entry.request_fingerprint = journalFingerprint(body.tool.tool, body.bytes);
      // A timestamp cache-buster is the time the request was sent: the gateway's clock or the real one.
      entry.request_key = requestKey(body.tool.meaning, value as Record<string, unknown>, [
        body.at,
        body.sentAt,
      ]);
      // The schema keeps the fields it knows: every string of the body as sent is scanned.
      addBodySecrets(entry, body.scan, own, raw, body.tool.field);
    }
    this.found(entry, own, 'call URL', this.url);
    const headers = this.headers ?? [];
    for (let i = 0; i + 2 < headers.length; i += 3) {
      const name = headers[i] as string;
      const position = headers[i + 2] as number;
      this.found(
        entry,
        own,
        () => `header ${placeNameWith(this.scan, own, name, position)}`,
        headers[i + 1] as string,
      );
    }
  }

  private found(entry: JournalNote, own: object, place: string | (() => string), text: string) {
    if (text.length < SHORTEST_SECRET) return;
    const { kinds } = this.scan(text, own);
    if (kinds.length > 0) addFound(entry, typeof place === 'string' ? place : place(), kinds);
  }

  /** The inputs as bytes in the journal's record (the scans, tool, token and agent by reference). */
  recordTo(writer: RecordWriter): void {
    writer.ref(readReadings);
    writer.ref(this.scan);
    writer.ref(this.token ?? null);
    writer.ref(this.agentId ?? null);
    writer.string(this.url);
    const headers = this.headers ?? [];
    writer.number(headers.length / 3);
    for (let i = 0; i + 2 < headers.length; i += 3) {
      writer.string(headers[i] as string);
      writer.string(headers[i + 1] as string);
      writer.number(headers[i + 2] as number);
    }
    writeBody(writer, this.body);
    writeOutgoing(writer, this.outgoing);
  }
}

function writeBody(writer: RecordWriter, body: BodyInputs | undefined): void {
  writer.tag(body ? 1 : 0);
  if (!body) return;
  writer.ref(body.tool);
  writer.bytes(body.bytes);
  writer.number(body.at);
  writer.number(body.sentAt);
  writer.ref(body.scan);
}

function readBody(reader: RecordReader): BodyInputs | undefined {
  if (reader.tag() === 0) return undefined;
  return {
    tool: reader.ref<BodyTool>(),
    bytes: reader.bytes(),
    at: reader.number(),
    sentAt: reader.number(),
    scan: reader.ref<FrozenScan>(),
  };
}

function writeOutgoing(writer: RecordWriter, outgoing: OutgoingText | undefined): void {
  writer.tag(outgoing ? 1 : 0);
  if (!outgoing) return;
  writer.ref(outgoing.field);
  writer.string(outgoing.text);
  writer.ref(outgoing.own.token ?? null);
  writer.ref(outgoing.own.agentId ?? null);
  writer.ref(outgoing.scan);
  const before = outgoing.before;
  writer.number(before ? before.size : -1);
  for (const [form, { prefix, suffix }] of before ?? []) {
    writer.string(form);
    writer.number(prefix);
    writer.number(suffix);
  }
}

function readOutgoing(reader: RecordReader): OutgoingText | undefined {
  if (reader.tag() === 0) return undefined;
  const field = reader.ref<OutgoingText['field']>();
  const text = reader.string();
  const own = {
    token: reader.ref<string | null>() ?? undefined,
    agentId: reader.ref<string | null>() ?? undefined,
    outgoing: true,
  };
  const scan = reader.ref<FrozenScan>();
  const count = reader.number();
  if (count < 0) return { field, text, own, scan };
  const before: SplitParts = new Map();
  for (let k = 0; k < count; k++)
    before.set(reader.string(), { prefix: reader.number(), suffix: reader.number() });
  return { field, text, own, before, scan };
}

/** Readings as `Readings.recordTo` wrote them. */
const readReadings: ReadBack<Readings> = (reader) => {
  const scan = reader.ref<FrozenScan>();
  const token = reader.ref<string | null>() ?? undefined;
  const agentId = reader.ref<string | null>() ?? undefined;
  const url = reader.string();
  let headers: (string | number)[] | undefined;
  for (let k = reader.number(); k > 0; k--) {
    headers ??= [];
    headers.push(reader.string(), reader.string(), reader.number());
  }
  return new Readings(scan, token, agentId, url, headers, readBody(reader), readOutgoing(reader));
};

/**
 * The readings of a finished call, or undefined when nothing it sent could hold a secret nor needs a
 * meaning. The call's own path and query string, and its header values but the identity header's (which
 * carries the token by design) and the credential headers' (`Authorization`, `X-Api-Key`, ...): a credential
 * presented to the gateway is its credential channel, not a secret "placed in a search query or URL" (spec
 * section 1, rule 2), and SDK clients always send their key there. A secret in any other header is found; a
 * header is named by its name when that is a short plain name holding no secret, otherwise by its position.
 */
export function entryReadings(ctx: CallContext): EntryReadings | undefined {
  const { request } = ctx;
  const url = request.query ? `${request.path}?${request.query}` : request.path;
  let headers: (string | number)[] | undefined;
  const sent = headerList(request);
  for (let i = 0; i < sent.length; i += 2) {
    const name = sent[i] as string;
    const value = sent[i + 1] as string;
    if (
      value.length >= SHORTEST_SECRET &&
      name !== IDENTITY_HEADER_KEY &&
      !CREDENTIAL_HEADERS.has(name) &&
      !isProtocolToken(name, value)
    ) {
      headers ??= [];
      headers.push(name, value, i >> 1);
    }
  }
  const { bodyTool, requestBody, outgoing } = ctx;
  if (
    url.length < SHORTEST_SECRET &&
    headers === undefined &&
    bodyTool === undefined &&
    outgoing === undefined
  )
    return undefined;
  const scan = ctx.runtime.scanSecrets.frozen?.() ?? ctx.runtime.scanSecrets;
  // Written into the journal's record at once (copied there), or read at once on a shared store.
  const body =
    bodyTool && requestBody
      ? {
          tool: bodyTool,
          bytes: requestBody,
          at: ctx.at,
          sentAt: ctx.sentAt ?? 0,
          scan: ctx.bodyScan ?? scan,
        }
      : undefined;
  return new Readings(scan, tokenOf(ctx), ctx.note.agent, url, headers, body, outgoing);
}
