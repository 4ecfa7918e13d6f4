import type { BoundedMap } from '../bounded-map.ts';
import { add, type Finding } from './findings.ts';
import type { SecretKind } from './patterns.ts';
import type { View } from './readings.ts';

/*
 * Pieces of secrets: a piece of PIECE or more characters of the caller's own token or key, or of a canary, is
 * a secret by itself; a secret split across two outgoing texts of one agent is found from the parts each held.
 */

/** A piece of a secret this long is a secret: an 8-character piece could be chance, 16 is not. */
export const PIECE = 16;
// A secret split across two requests is looked for in parts of at least this many characters each.
export const MIN_PART = 9;

/** A secret a piece of which is a secret too, ready to look for. */
export interface PartialSecret {
  form: string;
  kind: SecretKind;
  /** Its 8-character blocks at offsets 0, 8, 16, ... (see `findPieces`). */
  blocks: string[];
  /**
   * Its first and last MIN_PART characters, when it can be split into two parts both shorter than PIECE
   * (longer secrets leave a piece of PIECE characters in one of the two texts, found there).
   */
  head?: string;
  tail?: string;
}

export function partialSecret(form: string, kind: SecretKind): PartialSecret {
  const blocks: string[] = [];
  for (let block = 0; block + 8 <= form.length; block += 8) blocks.push(form.slice(block, block + 8));
  const splittable = form.length >= 2 * MIN_PART && form.length < 2 * PIECE - 1;
  return splittable
    ? { form, kind, blocks, head: form.slice(0, MIN_PART), tail: form.slice(-MIN_PART) }
    : { form, kind, blocks };
}

/**
 * Pieces of a secret of PIECE or more characters in a reading. Every such piece holds whole one of the
 * secret's 8-character blocks: each block is searched for once, and a hit is widened as far as the text
 * goes on matching the secret. Ordinary text holds none of the blocks.
 */
export function findPieces(found: Finding[], view: View, { form, kind, blocks }: PartialSecret) {
  const { text } = view;
  for (let index = 0; index < blocks.length; index++) {
    const needle = blocks[index] as string;
    const block = index * 8;
    for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
      let before = 0;
      while (before < at && before < block && text[at - before - 1] === form[block - before - 1]) before++;
      let after = 0;
      while (
        at + 8 + after < text.length &&
        block + 8 + after < form.length &&
        text[at + 8 + after] === form[block + 8 + after]
      )
        after++;
      if (before + 8 + after >= PIECE) add(found, view, at - before, before + 8 + after, kind);
    }
  }
}

/*
 * Encoded runs. A secret sent base64, base64url or hex encoded is a run of the encoding's alphabet. A run is
 * decoded only when it can be encoded text, which its characters tell without decoding: a printable ASCII
 * byte (0x20..0x7e) starts with a hex digit 2..7, and its top six bits make the first character of a base64
 * group one of I..Z or a..f. Encoded text passes (90% of those positions, leaving room for a few non-ASCII
 * bytes); a git commit hash, a UUID's groups, a random id or an ordinary word fails within a few characters.
 * The decoded bytes are scanned only when they are text.

/**
 * Per agent, the parts of its secrets its last outgoing text held: `prefix` and `suffix` lengths of each
 * secret (by its text), at least MIN_PART and less than PIECE (longer pieces are secrets by themselves).
 */
export type SplitMemory = BoundedMap<string, Map<string, { prefix: number; suffix: number }>>;

/** The longest part of `secret` of MIN_PART..PIECE-1 characters, from its start or its end, in one of the texts. */
function longestPart(texts: readonly string[], secret: string, fromStart: boolean): number {
  const holds = (length: number) => {
    const part = fromStart ? secret.slice(0, length) : secret.slice(-length);
    return texts.some((t) => t.includes(part));
  };
  for (let length = Math.min(PIECE - 1, secret.length - 1); length > MIN_PART; length--)
    if (holds(length)) return length;
  return MIN_PART;
}

/**
 * A secret split across the agent's previous outgoing text and this one: one held its start, the other its
 * end, together all of it (parts shorter than PIECE, which are not secrets alone). The part in this text is
 * redacted (the previous text was journaled already); the memory is updated to this text. A text holding no
 * secret's first or last MIN_PART characters costs two `includes` per secret.
 */
export function findSplit(
  found: Finding[],
  views: View[],
  agent: string,
  partial: readonly PartialSecret[],
  memory: SplitMemory,
): SecretKind[] {
  const before = memory.get(agent);
  let now: Map<string, { prefix: number; suffix: number }> | undefined;
  const split: SecretKind[] = [];
  for (const { form, kind, head, tail } of partial) {
    if (head === undefined || tail === undefined) continue;
    let hasHead = false;
    let hasTail = false;
    for (const view of views) {
      hasHead ||= view.text.includes(head);
      hasTail ||= view.text.includes(tail);
    }
    if (!hasHead && !hasTail) continue;
    const texts = views.map((v) => v.text);
    const parts = {
      prefix: hasHead ? longestPart(texts, form, true) : 0,
      suffix: hasTail ? longestPart(texts, form, false) : 0,
    };
    now ??= new Map();
    now.set(form, parts);
    const earlier = before?.get(form);
    if (!earlier) continue;
    // The end here after the start there, or the start here after the end there.
    const piece =
      earlier.prefix > 0 && parts.suffix > 0 && earlier.prefix + parts.suffix >= form.length
        ? form.slice(-parts.suffix)
        : earlier.suffix > 0 && parts.prefix > 0 && earlier.suffix + parts.prefix >= form.length
          ? form.slice(0, parts.prefix)
          : undefined;
    if (piece === undefined) continue;
    for (const view of views) {
      const at = view.text.indexOf(piece);
      if (at !== -1) add(found, view, at, piece.length, kind);
    }
    if (!split.includes(kind)) split.push(kind);
  }
  if (now) memory.set(agent, now);
  else if (before) memory.delete(agent);
  return split;
}
