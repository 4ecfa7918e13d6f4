import type { IsCredentialName } from '../secrets/credential-names.ts';
import type { ScanResult } from '../secrets/findings.ts';
import type { ScanCaller } from '../secrets/known-secrets.ts';
import type { ReadBack, Recordable } from './entry-record.ts';
import { type ExchangePieces, type JournalExchange, redactExchange } from './exchange-capture.ts';
import type { RecordReader, RecordWriter } from './record-bytes.ts';

/*
 * An exchange's raw pieces in a journal record (record-bytes.ts), as an entry keeps them until its first
 * reader (issue 35, point 2). Kept as JavaScript strings and arrays (the header lists, the answer's text,
 * the request's body), the pieces of the last `journal.capacity` exchanges survived every young-generation
 * collection of the gateway's life and were copied at each; as bytes they are outside the collector's heap,
 * and reading them back (the first read of an entry: admin API, dashboard, export) costs one decode, which
 * the redaction that follows dwarfs.
 *
 * Fields, in order: http version?, query?, request header list, request body?, request body bytes,
 * response header list, response body?, response body bytes? (an optional field as a tag byte, 0 absent,
 * 1 present, then its value). A body given as text is kept as its UTF-8 bytes (the redaction reads bytes
 * either way).
 */

function writeOptional<T>(writer: RecordWriter, value: T | undefined, write: (value: T) => void): void {
  writer.tag(value === undefined ? 0 : 1);
  if (value !== undefined) write(value);
}

/** Writes the pieces (but `isCredential`, a function the caller keeps). */
export function writePieces(writer: RecordWriter, pieces: ExchangePieces): void {
  writeOptional(writer, pieces.httpVersion, (text) => writer.string(text));
  writeOptional(writer, pieces.query, (text) => writer.string(text));
  writer.list(pieces.requestHeaders);
  writeOptional(writer, pieces.requestBody, (body) => writer.body(body));
  writer.number(pieces.requestBodyBytes);
  writer.list(pieces.responseHeaders);
  writeOptional(writer, pieces.responseBody, (body) => writer.body(body));
  writer.number(pieces.responseBodyBytes ?? -1);
}

/** The pieces `writePieces` wrote; the bodies as bytes, whatever they were given as. */
export function readPieces(reader: RecordReader): ExchangePieces {
  const httpVersion = reader.tag() === 1 ? reader.string() : undefined;
  const query = reader.tag() === 1 ? reader.string() : undefined;
  const requestHeaders = reader.list();
  const requestBody = reader.tag() === 1 ? reader.bytes() : undefined;
  const requestBodyBytes = reader.number();
  const responseHeaders = reader.list();
  const responseBody = reader.tag() === 1 ? reader.bytes() : undefined;
  const responseBodyBytes = reader.number();
  return {
    requestHeaders,
    ...(query !== undefined ? { query } : {}),
    requestBody,
    requestBodyBytes,
    responseHeaders,
    responseBody,
    ...(responseBodyBytes >= 0 ? { responseBodyBytes } : {}),
    ...(httpVersion !== undefined ? { httpVersion } : {}),
  };
}

/** The scan an exchange's redaction runs: the secrets known at the call (`SecretScanner.frozen()`). */
export type ExchangeScan = (text: string, own: ScanCaller) => Pick<ScanResult, 'redacted'>;

/**
 * An exchange's pieces and what their redaction needs (how much of each body to keep, the secrets known at
 * the call, the caller), taken on the request path: redacted at once on a shared store (`build`), kept as
 * bytes in the journal's record until first read in memory (`recordTo`).
 */
export class CapturedExchange implements Recordable {
  constructor(
    private readonly pieces: ExchangePieces,
    private readonly keep: number,
    private readonly scan: ExchangeScan,
    private readonly own: ScanCaller,
  ) {}

  /**
   * What a shared store keeps of it until a reader redacts it (`store/redis-journal-exchange.ts`: sealed):
   * the pieces, how much to keep and whose call it was; undefined when its redaction needs a function this
   * process holds (the proxy's own credential names), which cannot travel: redact it at once (`build`).
   */
  portable(): { pieces: ExchangePieces; keep: number; own: ScanCaller } | undefined {
    if (this.pieces.isCredential) return undefined;
    return { pieces: this.pieces, keep: this.keep, own: this.own };
  }

  build(): JournalExchange {
    const { scan, own } = this;
    return redactExchange(this.pieces, this.keep, (text) => scan(text, own).redacted);
  }

  recordTo(writer: RecordWriter): void {
    writer.ref(readCapturedExchange);
    writer.number(this.keep);
    writer.ref(this.scan);
    writer.ref(this.pieces.isCredential ?? null);
    writer.ref(this.own.token ?? null);
    writer.ref(this.own.agentId ?? null);
    writePieces(writer, this.pieces);
  }
}

const readCapturedExchange: ReadBack<CapturedExchange> = (reader) => {
  const keep = reader.number();
  const scan = reader.ref<ExchangeScan>();
  const isCredential = reader.ref<IsCredentialName | null>() ?? undefined;
  const token = reader.ref<string | null>() ?? undefined;
  const agentId = reader.ref<string | null>() ?? undefined;
  const pieces = readPieces(reader);
  return new CapturedExchange(isCredential ? { ...pieces, isCredential } : pieces, keep, scan, {
    token,
    agentId,
  });
};
