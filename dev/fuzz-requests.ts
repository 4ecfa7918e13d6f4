import { gzipSync } from 'node:zlib';
import fc from 'fast-check';

/* The requests of the HTTP fuzz run: arbitraries of raw HTTP/1.1 requests, byte for byte, and of well-formed
 * fetch requests. */

/** One raw request: the bytes (latin1) and how the client behaves after sending them. */
export interface RawRequest {
  bytes: string;
  method: string;
  /** Half-close after sending (most clients), or keep the connection open (to meet the timeouts). */
  halfClose: boolean;
}

/** One well-formed request for fetch. */
export interface FetchRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

/** The gateway's paths and some others, as request targets. */
const KNOWN_TARGETS = [
  '/v1/health',
  '/v1/whoami',
  '/v1/web/search',
  '/v1/web/fetch',
  '/idp/token',
  '/idp/verify',
  '/idp/auth.md?app=fuzz&endpoint=http%3A%2F%2F127.0.0.1%2Fv1%2Fwhoami&header=X-Agent-Identity',
  '/idp/auth.md?app=',
  '/__admin',
  '/__admin/agents',
  '/',
  '*',
  'http://127.0.0.1/v1/health',
  'example.com:443',
  '/v1/health?x=%zz',
  '/v1/%2e%2e/v1/health',
  '/v1//web/search',
  '/V1/HEALTH',
];
const BODY_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

/** Header values that are valid ByteStrings (fetch accepts them) but odd. */
const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 40,
});
/** Any bytes, control and non-ASCII ones included, as latin1 characters. */
const anyBytes = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength });

/** A request body: its bytes, and the Content-Type and Content-Encoding it is sent with. */
type Body = { bytes: Buffer; contentType?: string; encoding?: string };
const NO_BODY: fc.Arbitrary<Body> = fc.constant({ bytes: Buffer.alloc(0) });

/** Bodies: JSON the tools accept, JSON they refuse, text, bytes, and compressed JSON. */
const bodyArb: fc.Arbitrary<Body> = fc.oneof(
  NO_BODY,
  fc
    .record({
      query: fc.oneof(printable, fc.string({ maxLength: 600 })),
      count: fc.option(fc.integer({ min: -5, max: 30 })),
    })
    .map((v) => ({ bytes: Buffer.from(JSON.stringify(v)), contentType: 'application/json' })),
  fc
    .record({
      url: fc.oneof(fc.webUrl(), printable),
      max_length: fc.option(fc.integer({ min: -1, max: 20_000_000 })),
    })
    .map((v) => ({ bytes: Buffer.from(JSON.stringify(v)), contentType: 'application/json' })),
  fc
    .jsonValue({ maxDepth: 3 })
    .map((v) => ({ bytes: Buffer.from(JSON.stringify(v) ?? 'null'), contentType: 'application/json' })),
  fc
    .constantFrom('{', '{"query":', '[1,2]', '"x"', '{"api_key":"ak_verified_2b8d4f6a1c9e"}', '{"token":"x"}')
    .map((t) => ({
      bytes: Buffer.from(t),
      contentType: 'application/json',
    })),
  fc.uint8Array({ maxLength: 3000 }).map((b) => ({ bytes: Buffer.from(b), contentType: 'application/json' })),
  fc.string({ maxLength: 200 }).map((t) => ({ bytes: Buffer.from(t), contentType: 'text/plain' })),
  fc.constant({
    bytes: gzipSync('{"query":"fuzz gzip"}'),
    contentType: 'application/json',
    encoding: 'gzip',
  }),
  fc.constant({
    bytes: Buffer.from('{"query":"plain, labelled gzip"}'),
    contentType: 'application/json',
    encoding: 'gzip',
  }),
  fc.integer({ min: 60_000, max: 120_000 }).map((n) => ({
    bytes: Buffer.from(`{"query":"${'x'.repeat(n)}"}`),
    contentType: 'application/json',
  })),
);

/** Values for the identity header: valid tokens, spoiled ones and junk. */
const tokenArb = (tokens: readonly string[]) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...tokens) },
    fc
      .constantFrom(...tokens)
      .chain((t) =>
        fc
          .integer({ min: 0, max: t.length - 1 })
          .map((i) => `${t.slice(0, i)}${t[i] === 'A' ? 'B' : 'A'}${t.slice(i + 1)}`),
      ),
    fc.constantFrom('', ' ', 'agt1.x.y', 'Bearer x'),
    printable,
  );

/** Extra header lines, each `name: value` without the line ending. */
const headerLineArb = (tokens: readonly string[]) =>
  fc.oneof(
    { weight: 3, arbitrary: tokenArb(tokens).map((t) => `X-Agent-Identity: ${t}`) },
    fc
      .constantFrom('trace-1', 'ak_verified_2b8d4f6a1c9e', 'x'.repeat(200), '')
      .map((v) => `X-Request-Id: ${v}`),
    fc
      .constantFrom('gzip', 'br', 'deflate', 'identity', 'compress', 'gzip, br', 'x')
      .map((v) => `Content-Encoding: ${v}`),
    fc
      .constantFrom('chunked', 'gzip, chunked', 'identity', 'chunked, gzip')
      .map((v) => `Transfer-Encoding: ${v}`),
    fc.constantFrom('-1', '1e3', 'abc', '99999999999999999999', '0').map((v) => `Content-Length: ${v}`),
    fc.constantFrom('100-continue', 'bogus').map((v) => `Expect: ${v}`),
    fc.constantFrom('text/html', 'application/json', '*/*').map((v) => `Accept: ${v}`),
    fc.constantFrom('"k-1"', 'k-2', '').map((v) => `Idempotency-Key: ${v}`),
    fc.constantFrom(
      'X-Admin-Key: nope-nope-nope',
      'Authorization: Bearer nope',
      'Connection: close',
      'Connection: Upgrade\r\nUpgrade: websocket',
    ),
    fc.tuple(anyBytes(12), anyBytes(60)).map(([name, value]) => `${name}: ${value}`),
    fc.integer({ min: 8000, max: 20_000 }).map((n) => `X-Big: ${'b'.repeat(n)}`),
  );

/** The parts of a raw request, before they are written out. */
interface RawParts {
  method: string;
  target: string;
  version: string;
  host: string;
  headers: string[];
  body: { bytes: Buffer; contentType?: string; encoding?: string };
  framing: 'length' | 'short' | 'chunked' | 'broken-chunked' | 'none' | 'length-and-chunked';
  newline: string;
  after: string;
  halfClose: boolean;
}

const json = (value: unknown) => ({
  bytes: Buffer.from(JSON.stringify(value)),
  contentType: 'application/json',
});

/** The gateway's routes, each with the body it expects: a plausible request reaches deep into the pipeline. */
const routeArb = (
  tokens: readonly string[],
): fc.Arbitrary<{ method: string; target: string; body: fc.Arbitrary<Body> }> =>
  fc.oneof(
    fc.constant({ method: 'GET', target: '/v1/health', body: NO_BODY }),
    fc.constant({ method: 'HEAD', target: '/v1/health', body: NO_BODY }),
    fc.constant({ method: 'GET', target: '/v1/whoami', body: NO_BODY }),
    fc.constant({
      method: 'POST',
      target: '/v1/web/search',
      body: fc
        .record({ query: fc.string({ minLength: 1, maxLength: 80 }), count: fc.integer({ min: 1, max: 20 }) })
        .map(json),
    }),
    fc.constant({
      method: 'POST',
      target: '/v1/web/fetch',
      body: fc
        .oneof(
          fc.webUrl(),
          fc.constantFrom(
            'https://blog.hostile.example/ai-news',
            'https://archive.hostile.example/everything',
          ),
        )
        .map((url) => json({ url, max_length: 500 })),
    }),
    fc.constant({
      method: 'POST',
      target: '/idp/token',
      body: fc
        .constantFrom('ak_verified_2b8d4f6a1c9e', 'ak_revoked_6d2f8b4e9a3c', 'nope-nope')
        .map((k) => json({ api_key: k })),
    }),
    fc.constant({
      method: 'POST',
      target: '/idp/verify',
      body: tokenArb(tokens).map((token) => json({ token })),
    }),
    fc.constant({
      method: 'GET',
      target: KNOWN_TARGETS[6] as string,
      body: NO_BODY,
    }),
  );

/** One thing wrong with a request: every part of it, from the method to what follows the body. */
const mutationArb = (tokens: readonly string[]): fc.Arbitrary<(parts: RawParts) => void> =>
  fc.oneof(
    fc
      .oneof(
        fc.constantFrom(
          'GET',
          'POST',
          'PUT',
          'DELETE',
          'PATCH',
          'OPTIONS',
          'CONNECT',
          'TRACE',
          'get',
          'FOO',
          'PRI',
          'QUERY',
        ),
        anyBytes(8),
      )
      .map((method) => (p: RawParts) => {
        p.method = method;
      }),
    fc
      .oneof(
        fc.constantFrom(...KNOWN_TARGETS),
        anyBytes(40).map((t) => `/${t}`),
        fc.integer({ min: 1000, max: 20_000 }).map((n) => `/${'a'.repeat(n)}`),
      )
      .map((target) => (p: RawParts) => {
        p.target = target;
      }),
    fc
      .constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.2', 'http/1.1', 'HTTP/1', '')
      .map((v) => (p: RawParts) => {
        p.version = v;
      }),
    fc.constantFrom('', 'Host: ', 'Host: a b').map((host) => (p: RawParts) => {
      p.host = host;
    }),
    fc.array(headerLineArb(tokens), { minLength: 1, maxLength: 3 }).map((lines) => (p: RawParts) => {
      p.headers.push(...lines);
    }),
    bodyArb.map((body) => (p: RawParts) => {
      p.body = body;
    }),
    fc
      .constantFrom(
        'short' as const,
        'chunked' as const,
        'broken-chunked' as const,
        'none' as const,
        'length-and-chunked' as const,
      )
      .map((framing) => (p: RawParts) => {
        p.framing = framing;
      }),
    fc.constant((p: RawParts) => {
      p.newline = '\n';
    }),
    fc
      .oneof(fc.constant('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'), anyBytes(30))
      .map((after) => (p: RawParts) => {
        p.after = after;
      }),
    fc.constant((p: RawParts) => {
      p.halfClose = false;
    }),
  );

/** Writes the parts out as bytes (latin1), framing the body as the parts say. */
function writeRaw({
  method,
  target,
  version,
  host,
  headers,
  body,
  framing,
  newline,
  after,
}: RawParts): string {
  const lines = [`${method} ${target} ${version}`.trimEnd()];
  if (host) lines.push(host);
  const withBody = body.bytes.length > 0 || BODY_METHODS.includes(method);
  if (withBody && body.contentType) lines.push(`Content-Type: ${body.contentType}`);
  if (withBody && body.encoding) lines.push(`Content-Encoding: ${body.encoding}`);
  lines.push(...headers);
  let payload = '';
  if (withBody) {
    const text = body.bytes.toString('latin1');
    if (framing === 'length' || framing === 'length-and-chunked')
      lines.push(`Content-Length: ${body.bytes.length}`);
    if (framing === 'short') lines.push(`Content-Length: ${body.bytes.length + 10}`);
    if (framing === 'chunked' || framing === 'broken-chunked' || framing === 'length-and-chunked')
      lines.push('Transfer-Encoding: chunked');
    if (framing === 'chunked' || framing === 'length-and-chunked')
      payload = `${text.length > 0 ? `${text.length.toString(16)}\r\n${text}\r\n` : ''}0\r\n\r\n`;
    else if (framing === 'broken-chunked') payload = `zz\r\n${text}`;
    else if (framing !== 'none') payload = text;
  }
  return `${lines.join(newline)}${newline}${newline}${payload}${after}`;
}

/**
 * Raw HTTP/1.1 requests: a plausible request for one of the gateway's routes (a token, the body it expects,
 * framed by Content-Length), with none, one or two things wrong with it (any part, from the method to bytes
 * pipelined behind it, or a client that keeps its side open on a short body and meets the timeouts).
 */
export function rawRequestArb(tokens: readonly string[]): fc.Arbitrary<RawRequest> {
  return fc
    .tuple(
      routeArb(tokens).chain((route) =>
        fc.record({
          route: fc.constant(route),
          body: fc.oneof({ weight: 4, arbitrary: route.body }, bodyArb),
          token: fc.option(tokenArb(tokens), { freq: 5 }),
        }),
      ),
      fc.array(mutationArb(tokens), { maxLength: 2 }),
    )
    .map(([{ route, body, token }, mutations]) => {
      const parts: RawParts = {
        method: route.method,
        target: route.target,
        version: 'HTTP/1.1',
        host: 'Host: 127.0.0.1',
        headers: token === null ? [] : [`X-Agent-Identity: ${token}`],
        body,
        framing: 'length',
        newline: '\r\n',
        after: '',
        halfClose: true,
      };
      for (const mutate of mutations) mutate(parts);
      return { bytes: writeRaw(parts), method: parts.method, halfClose: parts.halfClose };
    });
}

/** Well-formed requests for fetch (undici refuses what HTTP forbids, so these reach the pipeline). */
export function fetchRequestArb(tokens: readonly string[]): fc.Arbitrary<FetchRequest> {
  return fc
    .record({
      // Mostly a route with the body it expects; else any method on any path with any body.
      request: fc.oneof(
        {
          weight: 3,
          arbitrary: routeArb(tokens).chain((route) =>
            fc.record({
              method: fc.constant(route.method),
              path: fc.constant(route.target),
              body: fc.oneof({ weight: 4, arbitrary: route.body }, bodyArb),
            }),
          ),
        },
        fc.record({
          method: fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
          path: fc.oneof(
            fc.constantFrom(...KNOWN_TARGETS.filter((t) => t.startsWith('/'))),
            fc.webPath().map((p) => p || '/'),
          ),
          body: bodyArb,
        }),
      ),
      token: fc.option(
        tokenArb(tokens).filter((t) => /^[\x20-\x7e]*$/.test(t)),
        { freq: 5 },
      ),
      extra: fc.dictionary(
        // No Expect: undici refuses to send one (the raw requests cover it).
        fc.constantFrom('x-request-id', 'content-encoding', 'accept', 'idempotency-key', 'x-admin-key'),
        printable,
        { maxKeys: 2 },
      ),
    })
    .map(({ request: { method, path, body }, token, extra }) => {
      const headers: Record<string, string> = { ...extra };
      if (token !== null) headers['x-agent-identity'] = token;
      const hasBody = method !== 'GET' && method !== 'HEAD' && body.bytes.length > 0;
      if (hasBody && body.contentType) headers['content-type'] = body.contentType;
      if (hasBody && body.encoding) headers['content-encoding'] = body.encoding;
      return { method, path, headers, body: hasBody ? new Uint8Array(body.bytes) : undefined };
    });
}
