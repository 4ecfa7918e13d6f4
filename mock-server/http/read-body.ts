import { isUtf8 } from 'node:buffer';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from 'node:zlib';
import type { z } from 'zod';
import { formatPath } from '../config/load-config.ts';
import { GatewayError } from '../errors.ts';
import type { MaybePromise } from '../maybe-promise.ts';
import type { GatewayRequest } from './context.ts';

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

/** 415 unless the Content-Type is JSON (application/json or application/*+json) in UTF-8. */
function checkContentType(contentType: string | undefined): void {
  if (contentType === 'application/json') return;
  const [mediaType = '', ...params] = (contentType ?? '').split(';').map((part) => part.trim());
  const charset = params
    .find((p) => p.toLowerCase().startsWith('charset='))
    ?.slice(8)
    .replace(/"/g, '');
  if (JSON_MEDIA_TYPE.test(mediaType) && (charset === undefined || /^utf-?8$/i.test(charset))) return;
  throw new GatewayError('unsupported_media_type', {
    message: contentType
      ? `The request body must be UTF-8 JSON with Content-Type: application/json, not "${contentType}".`
      : 'The request body must be JSON: send Content-Type: application/json.',
    details: { expected: 'application/json', received: contentType ?? null },
  });
}

/** 413: what every adapter throws once a body passes the limit, whatever Content-Length claimed. */
export const payloadTooLarge = (maxBytes: number) =>
  new GatewayError('payload_too_large', {
    message: `The request body is larger than ${maxBytes} bytes.`,
    details: { max_bytes: maxBytes },
  });

/** 400: the client went away mid-upload (or sent less than its Content-Length): its mistake, not a 500. */
export const incompleteBody = () =>
  new GatewayError('invalid_request', {
    message: 'The request body could not be read to its end: the connection closed before it was complete.',
    details: { field: 'body' },
  });

type Decoder = (bytes: Uint8Array, options: ZlibOptions) => Promise<Uint8Array>;

/** The content codings a body may be sent in (RFC 9110 section 8.4.1), decoded with node:zlib. */
const DECODERS: Readonly<Record<string, Decoder>> = {
  gzip: promisify(gunzip),
  'x-gzip': promisify(gunzip),
  // RFC 9110 section 8.4.1.2: "deflate" is the zlib format (RFC 1950), not a bare deflate stream.
  deflate: promisify(inflate),
  br: promisify(brotliDecompress),
};
/** What a 415 names as accepted, and the Accept-Encoding it sends (RFC 9110 section 12.5.3). */
const ACCEPTED_ENCODINGS = ['gzip', 'deflate', 'br', 'identity'] as const;
// Each layer decodes at most max_body_bytes, so layers multiply the work: "gzip, br" is as far as it goes.
const MAX_CODINGS = 2;

/**
 * The content codings of a body, in the order they were applied, without `identity`; 415 for one the gateway
 * cannot decode, naming those it can (and saying so in Accept-Encoding).
 */
function contentCodings(header: string | undefined): string[] {
  if (header === undefined) return [];
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  const unknown = codings.find((coding) => !Object.hasOwn(DECODERS, coding));
  if (unknown === undefined && codings.length <= MAX_CODINGS) return codings;
  throw new GatewayError('unsupported_media_type', {
    message:
      unknown === undefined
        ? `The request body has ${codings.length} content codings (Content-Encoding: ${header}); at most ${MAX_CODINGS} are decoded.`
        : `The request body's Content-Encoding "${unknown}" is not supported: send it plain, or encoded with gzip, deflate or br.`,
    details: { accepted_encodings: ACCEPTED_ENCODINGS, received: header },
    headers: { 'accept-encoding': 'gzip, deflate, br' },
  });
}

/**
 * Undoes the content codings, last applied first. The decoded size counts against the limit: each layer stops
 * (413) as soon as it would pass `maxBytes`, so a small compressed bomb is never inflated whole.
 */
async function decodeBody(bytes: Uint8Array, codings: readonly string[], maxBytes: number) {
  let decoded = bytes;
  for (const coding of [...codings].reverse()) {
    try {
      decoded = await (DECODERS[coding] as Decoder)(decoded, { maxOutputLength: maxBytes });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new GatewayError('payload_too_large', {
          message: `The request body is larger than ${maxBytes} bytes once decoded (Content-Encoding: ${codings.join(', ')}).`,
          details: { max_bytes: maxBytes },
        });
      }
      throw new GatewayError('invalid_request', {
        message: `The request body is labelled Content-Encoding: ${coding} but is not valid ${coding} data (${(error as Error).message}).`,
        details: { field: 'body' },
      });
    }
  }
  return decoded;
}

/**
 * The body stage's first half: Content-Type (415), Content-Encoding (415 for one not decoded), size (413,
 * counted as sent and again as decoded; 400 when cut short), and the body decoded (400 when it is not what
 * its Content-Encoding says). A body without Content-Encoding costs one header lookup more.
 */
export function readBody(
  request: GatewayRequest,
  maxBytes: number,
  /** Handed the bytes as sent, before their codings are undone (what a refused body's reading needs). */
  asSent?: (bytes: Uint8Array) => void,
): MaybePromise<Uint8Array> {
  checkContentType(request.header('content-type'));
  const codings = contentCodings(request.header('content-encoding'));
  // Without a wait when the adapter has the whole body already (node:http, a small body).
  const arrived = request.arrivedBody?.(maxBytes);
  if (codings.length === 0) return arrived ?? request.body(maxBytes);
  return (arrived ? Promise.resolve(arrived) : request.body(maxBytes)).then((bytes) => {
    asSent?.(bytes);
    return decodeBody(bytes, codings, maxBytes);
  });
}

/** The body stage's second half: UTF-8 and JSON syntax (400), then the schema, naming the first bad field. */
export function parseJsonBody<S extends z.ZodType>(bytes: Uint8Array, schema: S): z.output<S> {
  return parseJsonBodyAsSent(bytes, schema).value;
}

/**
 * `parseJsonBody`, also handing back the body as sent (`raw`: every field kept, as JSON.parse gave it), for
 * what must look at fields the schema drops (the secret scan) without parsing the body twice.
 */
export function parseJsonBodyAsSent<S extends z.ZodType>(
  bytes: Uint8Array,
  schema: S,
): { raw: unknown; value: z.output<S> } {
  // Validated first (simdutf), then decoded: a lenient decode would turn bad bytes into U+FFFD silently.
  if (!isUtf8(bytes)) {
    throw new GatewayError('invalid_request', {
      message: 'The request body is not valid UTF-8.',
      details: { field: 'body' },
    });
  }
  const decoded = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  // A leading byte order mark is dropped, as TextDecoder does (RFC 8259 lets parsers ignore it).
  const text = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
  if (text.trim() === '') {
    throw new GatewayError('invalid_request', {
      message: 'The request body is empty: send a JSON object.',
      details: { field: 'body' },
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new GatewayError('invalid_request', {
      message: `The request body is not valid JSON: ${(error as Error).message}`,
      details: { field: 'body' },
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayError('invalid_request', {
      message: 'The request body must be a JSON object.',
      details: { field: 'body' },
    });
  }
  const result = schema.safeParse(value);
  if (result.success) return { raw: value, value: result.data };
  throw invalidRequestOf(result.error);
}

/** 400 `invalid_request` for what failed a schema, naming the first bad field (`body` when none is named). */
export function invalidRequestOf(error: z.ZodError): GatewayError {
  const issues = error.issues.map((issue) => ({
    field: formatPath(issue.path) || 'body',
    message: issue.message,
  }));
  const first = issues[0] ?? { field: 'body', message: 'is invalid' };
  return new GatewayError('invalid_request', {
    message: `${first.field}: ${first.message}`,
    details: { field: first.field, issues },
  });
}

/**
 * The whole body stage: Content-Type (415), size (413), UTF-8 and JSON syntax (400), then the schema,
 * whose first failing field is named in the 400 message.
 *
 * @example
 * const { query } = await readJsonBody(ctx.request, searchRequestSchema, 65536);
 */
export async function readJsonBody<S extends z.ZodType>(
  request: GatewayRequest,
  schema: S,
  maxBytes: number,
): Promise<z.output<S>> {
  return parseJsonBody(await readBody(request, maxBytes), schema);
}
