import fc from 'fast-check';
import type { TokenValue } from '../model/token-value.ts';

/*
 * Long tokens, in two bands, by what a gateway may fairly answer them.
 *
 * - long (1,000 to 6,000 characters): within the header limits real servers ship with (nginx and Apache
 *   8 KiB a line, Node 16 KiB in all, Envoy 60 KiB): a plain 401 invalid_identity_token, or a 431 from a
 *   server whose limit is set lower. The most common real way to break it: a verifier (or a web framework's
 *   header validation) that answers 400 to a token over 1, 2 or 4 KiB, or crashes on it. The most unusual
 *   legal way to keep it: a server with a 1 or 2 KiB header limit that answers 431 before the gateway runs.
 * - oversized (6,000 to 12,000 characters): near and past 8 KiB, where servers refuse the header itself;
 *   400, 413, 414 or 431 are fair too (nginx answers 400 "Request Header Or Cookie Too Large").
 *
 * Random lengths find a fault at one boundary only by luck (a gateway answering 400 beyond 2,048
 * characters passed 8 seeds of 20), so each band also has fixed boundary cases, tried on every seed: just
 * below, at and just above 1, 2 and 4 KiB (long), and 8 KiB (oversized).
 */

/** The boundaries real servers have (1, 2, 4 KiB), one below, at, and one above each. */
export const LONG_TOKEN_BOUNDARIES = [1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097] as const;
/** Around 8 KiB, the common header-line limit (nginx, Apache, gunicorn), and past it. */
export const OVERSIZED_TOKEN_BOUNDARIES = [8191, 8192, 8193] as const;

/** A token of exactly `length` URL-safe characters, repeating `unit`. */
export const tokenOfLength = (length: number, unit = 'Ab3_x-9Z'): TokenValue => ({
  kind: 'literal',
  value: unit.repeat(Math.ceil(length / unit.length)).slice(0, length),
});

const ofLengths = (min: number, max: number): fc.Arbitrary<TokenValue> =>
  fc
    .tuple(fc.integer({ min, max }), fc.stringMatching(/^[A-Za-z0-9_-]{8}$/))
    .map(([length, unit]) => tokenOfLength(length, unit));

/** 1,000 to 6,000 characters: well within common header limits, so it must get a plain 401 (or a 431). */
export const longToken = (): fc.Arbitrary<TokenValue> => ofLengths(1000, 6000);

/** 6,000 to 12,000 characters: a server may refuse the header itself (400, 413, 414, 431), never with a 5xx. */
export const oversizedToken = (): fc.Arbitrary<TokenValue> => ofLengths(6000, 12000);

/** The fixed boundary cases of each band, tried on every seed before the generated ones. */
export const longTokenBoundaries = (): { long: TokenValue[]; oversized: TokenValue[] } => ({
  long: LONG_TOKEN_BOUNDARIES.map((length) => tokenOfLength(length)),
  oversized: OVERSIZED_TOKEN_BOUNDARIES.map((length) => tokenOfLength(length)),
});
