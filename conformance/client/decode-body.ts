import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/**
 * A body as text: decoded from its Content-Encoding (gzip, deflate, br) when it has one, so a failure
 * never shows compressed bytes as mojibake; labelled instead when it cannot be decoded.
 */
export function decodeBody(raw: Buffer, encoding: string | undefined): string {
  const codings = (encoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity');
  let body = raw;
  try {
    for (const coding of codings.reverse()) {
      if (coding === 'gzip' || coding === 'x-gzip') body = gunzipSync(body);
      else if (coding === 'deflate') body = inflateSync(body);
      else if (coding === 'br') body = brotliDecompressSync(body);
      else return `<${raw.length} bytes with Content-Encoding: ${encoding}, not decoded>`;
    }
  } catch (error) {
    return `<${raw.length} bytes with Content-Encoding: ${encoding} that do not decode (${(error as Error).message})>`;
  }
  return body.toString('utf8');
}
