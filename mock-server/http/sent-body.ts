import { brotliDecompressSync, gunzipSync, inflateSync, type ZlibOptions } from 'node:zlib';

/*
 * The one reader of what a call sends in its body, whatever it is labelled: for the secret scan and the
 * request's meaning, on the gateway (a refused call's body: `pipeline/outgoing-text.ts`) and the proxy (every
 * tool call it forwards: `proxy/exchange-notes.ts`) alike. It undoes the content codings (gzip, deflate, br),
 * decodes the text in its charset, and reads it by its media type: JSON, a form (urlencoded or multipart), or
 * text. It never throws: what it cannot read is said (`unreadable`), so the journal can show it as a finding
 * rather than a blind spot. It hands text and fields to the secret scanner; it does not scan or redact.
 * Synchronous: the proxy notes an exchange in the same turn it records it.
 */

/** What a call sent in its body, read. */
export interface SentBody {
  /**
   * What the body says: JSON as parsed (also JSON sent as text); a form's fields as an object (a name sent
   * more than once: an array of its values; a multipart file: `{ filename, content }`); any other body as its
   * text. Absent when the body is empty or could not be decoded at all.
   */
  value?: unknown;
  /** The body's bytes once its content codings are undone (the same bytes when it had none). */
  decoded?: Uint8Array;
  /** Why the body, or part of it, could not be read: one sentence. The text read anyway is in `value`. */
  unreadable?: string;
}

/** The headers that say how a body is to be read. */
export interface SentBodyLabels {
  contentType?: string | undefined;
  contentEncoding?: string | undefined;
}

type SyncDecoder = (bytes: Uint8Array, options: ZlibOptions) => Uint8Array;
/** The content codings read (RFC 9110 section 8.4.1); "deflate" is the zlib format (RFC 1950). */
const DECODERS: Readonly<Record<string, SyncDecoder>> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};
// Each layer decodes at most `maxBytes`: "gzip, br" is as far as a body is read (as the gateway's body stage).
const MAX_CODINGS = 2;

/**
 * Reads a body as sent, labelled by its Content-Type and Content-Encoding; decodes at most `maxBytes` a layer.
 *
 * @example
 * readSentBody(Buffer.from('query=hello&api_key=k'), { contentType: 'application/x-www-form-urlencoded' }, 65536).value;
 * // { query: 'hello', api_key: 'k' }
 */
export function readSentBody(bytes: Uint8Array, labels: SentBodyLabels, maxBytes: number): SentBody {
  if (bytes.length === 0) return {};
  const decoded = undoCodings(bytes, labels.contentEncoding, maxBytes);
  if ('unreadable' in decoded) return decoded;
  const { type, params } = mediaType(labels.contentType);
  // A multipart body mixes texts and files: read byte for byte, each part then in its own charset.
  const text =
    type === 'multipart/form-data' && !params.has('charset')
      ? { text: latin1(decoded.bytes) }
      : decodeText(decoded.bytes, params.get('charset'));
  const read = readText(text.text, type, params);
  const unreadable = text.unreadable ?? read.unreadable;
  return { value: read.value, decoded: decoded.bytes, ...(unreadable ? { unreadable } : {}) };
}

function undoCodings(
  bytes: Uint8Array,
  header: string | undefined,
  maxBytes: number,
): { bytes: Uint8Array } | { unreadable: string } {
  const codings = (header ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  const unknown = codings.find((coding) => !Object.hasOwn(DECODERS, coding));
  if (unknown !== undefined)
    return {
      unreadable: `its Content-Encoding "${unknown}" is not one the harness decodes (gzip, deflate, br)`,
    };
  if (codings.length > MAX_CODINGS)
    return {
      unreadable: `it has ${codings.length} content codings (${header}); at most ${MAX_CODINGS} are decoded`,
    };
  let out = bytes;
  for (const coding of codings.reverse()) {
    try {
      out = (DECODERS[coding] as SyncDecoder)(out, { maxOutputLength: maxBytes });
    } catch (error) {
      return {
        unreadable:
          (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
            ? `it is larger than ${maxBytes} bytes once decoded (Content-Encoding: ${header})`
            : `it is labelled Content-Encoding: ${coding} but is not valid ${coding} data`,
      };
    }
  }
  return { bytes: out };
}

/** A Content-Type's media type (lower case) and its parameters (names lower case, values unquoted). */
function mediaType(header: string | undefined): { type: string; params: Map<string, string> } {
  const [type = '', ...rest] = (header ?? '').split(';');
  const params = new Map<string, string>();
  for (const param of rest) {
    const at = param.indexOf('=');
    if (at < 0) continue;
    const value = param.slice(at + 1).trim();
    params.set(
      param.slice(0, at).trim().toLowerCase(),
      value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value,
    );
  }
  return { type: type.trim().toLowerCase(), params };
}

/**
 * The text of bytes in a charset (UTF-8 unless named; any the WHATWG Encoding standard knows, through
 * TextDecoder). Bytes that are not valid in it, or a charset nobody knows, are read byte for byte (latin1:
 * an ASCII secret stays visible) and said.
 */
function decodeText(bytes: Uint8Array, charset: string | undefined): { text: string; unreadable?: string } {
  const label = charset ?? 'utf-8';
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(label, { fatal: true });
  } catch {
    return {
      text: latin1(bytes),
      unreadable: `its charset "${label}" is not one known to the Encoding standard`,
    };
  }
  try {
    return { text: decoder.decode(bytes) };
  } catch {
    return { text: latin1(bytes), unreadable: `it is labelled charset ${label} but is not valid ${label}` };
  }
}

const latin1 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');

/** What a text body says, by its media type; JSON is recognised whatever the label. */
function readText(
  text: string,
  type: string,
  params: Map<string, string>,
): { value: unknown; unreadable?: string } {
  if (type === 'application/x-www-form-urlencoded') return { value: fieldsOf(new URLSearchParams(text)) };
  if (type === 'multipart/form-data') {
    const boundary = params.get('boundary');
    const parts = boundary ? multipartFields(text, boundary) : undefined;
    if (parts) return { value: parts };
    return {
      value: text,
      unreadable: boundary
        ? 'it is labelled multipart/form-data but its parts are not delimited by its boundary'
        : 'it is labelled multipart/form-data without a boundary',
    };
  }
  const start = text.trimStart()[0];
  if (start === '{' || start === '[' || start === '"') {
    try {
      return { value: JSON.parse(text) };
    } catch {
      // Not JSON after all: its text is what was sent.
    }
  }
  return { value: text };
}

type Fields = Record<string, unknown>;

/** A multipart part's text: in its charset, else UTF-8 when it is, else byte for byte (a binary file). */
const partText = (bytes: Buffer, charset: string | undefined) => {
  const read = decodeText(bytes, charset);
  return read.unreadable === undefined || charset !== undefined ? read.text : latin1(bytes);
};

/** Adds a field to a form's fields: a name sent again makes an array of its values. */
function addField(fields: Fields, name: string, value: unknown): void {
  if (!Object.hasOwn(fields, name)) fields[name] = value;
  else {
    const known = fields[name];
    fields[name] = Array.isArray(known) ? [...known, value] : [known, value];
  }
}

function fieldsOf(params: URLSearchParams): Fields {
  const fields: Fields = Object.create(null);
  for (const [name, value] of params) addField(fields, name, value);
  return fields;
}

/**
 * The fields of a multipart/form-data body (RFC 7578): each part's name and text, a file's name beside its
 * content. Undefined when the boundary delimits no part. (A synchronous reading: the Web `formData()` is
 * asynchronous, and the proxy notes an exchange in one turn.)
 */
function multipartFields(text: string, boundary: string): Fields | undefined {
  const sections = text.split(`--${boundary}`);
  if (sections.length < 3) return undefined;
  const fields: Fields = Object.create(null);
  // The preamble (before the first delimiter) and the epilogue (after the closing `--`) are no parts.
  for (const section of sections.slice(1, -1)) {
    const part = section.replace(/^\r?\n/, '').replace(/\r?\n$/, '');
    const split = /\r?\n\r?\n/.exec(part);
    const head = split ? part.slice(0, split.index) : part;
    const content = split ? part.slice(split.index + split[0].length) : '';
    const disposition = /^content-disposition:(.*)$/im.exec(head)?.[1] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? `part ${Object.keys(fields).length + 1}`;
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    const charset = /^content-type:.*;\s*charset="?([^";\s]+)/im.exec(head)?.[1];
    const value = partText(Buffer.from(content, 'latin1'), charset);
    addField(fields, name, filename === undefined ? value : { filename, content: value });
  }
  return fields;
}
