import { isUtf8 } from 'node:buffer';
import type { z } from 'zod';
import { formatPath } from '../config/load-config.ts';
import { GatewayError } from '../errors.ts';
import type { GatewayRequest } from './context.ts';

/**
 * A zod type error that tells a missing field from a wrong one: `is required`, or `must be <what>`.
 *
 * @example
 * z.object({ query: z.string(mustBe('a string')) }); // {} -> "query: is required"
 */
export const mustBe = (what: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${what}`),
});

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

/** 415 unless the Content-Type is JSON (application/json or application/*+json) in UTF-8. */
export function checkContentType(contentType: string | undefined): void {
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

/** The body stage's first half: Content-Type (415) and size (413, 400 when cut short); the raw bytes. */
export async function readBody(request: GatewayRequest, maxBytes: number): Promise<Uint8Array> {
  checkContentType(request.header('content-type'));
  return request.body(maxBytes);
}

/** The body stage's second half: UTF-8 and JSON syntax (400), then the schema, naming the first bad field. */
export function parseJsonBody<S extends z.ZodType>(bytes: Uint8Array, schema: S): z.output<S> {
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
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    field: formatPath(issue.path) || 'body',
    message: issue.message,
  }));
  const first = issues[0] ?? { field: 'body', message: 'is invalid' };
  throw new GatewayError('invalid_request', {
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
