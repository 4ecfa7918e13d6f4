import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { type JournalExchange, redactExchange } from '../journal/exchange-capture.ts';
import { type ExchangeScan, readPieces, writePieces } from '../journal/packed-exchange.ts';
import { createRefTable, RecordReader, RecordWriter } from '../journal/record-bytes.ts';
import type { ExchangeWork } from '../journal/record-ring.ts';

/*
 * An exchange on the shared journal, as the in-memory journal keeps one: its raw pieces until a reader
 * redacts them. The redaction (a secret scan per header value and body, about 0.2 ms) is most of what an
 * entry costs, and most entries are never read: done on the request path it was three quarters of a Redis
 * instance's CPU per request. Redis must never hold anything unredacted, so the pieces go to it sealed
 * (AES-256-GCM under a key derived from the signing secret every instance shares, `store-guard.ts`): Redis,
 * its dumps and its MONITOR see ciphertext; any instance that reads the entry (a page, an export, the
 * dashboard) opens and redacts it with the secrets it knows, exactly as the memory journal's first read does.
 *
 * Sealed: version byte 1, key id (4 bytes), nonce (12: this process's 4 random bytes and a counter),
 * GCM tag (16), ciphertext of: keep (number), token? and agent id? (tag and string), the pieces
 * (`writePieces`); as base64 (the stream is read as text).
 */

const VERSION = 1;
const KEY_ID_BYTES = 4;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KEY_ID_BYTES + NONCE_BYTES + TAG_BYTES;
/** The base64 characters of a seal that hold its version, key id and nonce: unique per seal. */
export const SEAL_HEAD = Math.floor(((1 + KEY_ID_BYTES + NONCE_BYTES) * 4) / 3);

interface ExchangeKey {
  id: Buffer;
  key: Buffer;
}

function keyOf(secret: string): ExchangeKey {
  const key = Buffer.from(hkdfSync('sha256', secret, 'agent-tool-gateway', 'journal exchange v1', 32));
  return { id: createHash('sha256').update(key).digest().subarray(0, KEY_ID_BYTES), key };
}

/** Seals and opens exchanges for one instance; `secret` is read at each use (it may be adopted later). */
export function createExchangeSeal(secret: () => string) {
  // Every key this instance sealed or opened with, by id: an instance that adopted an older secret still
  // opens what it sealed before.
  const keys = new Map<string, ExchangeKey>();
  let current: { secret: string; key: ExchangeKey } | undefined;
  const currentKey = () => {
    const now = secret();
    if (current?.secret !== now) {
      current = { secret: now, key: keyOf(now) };
      keys.set(current.key.id.toString('hex'), current.key);
    }
    return current.key;
  };
  const nonce = Buffer.alloc(NONCE_BYTES);
  randomBytes(4).copy(nonce, 0);
  let counter = 0n;
  const writer = new RecordWriter(createRefTable());
  const refs = createRefTable();

  return {
    /** The exchange sealed for the store (base64), or undefined when it must be redacted at once. */
    seal(exchange: ExchangeWork): string | undefined {
      const portable = exchange.portable?.();
      if (!portable) return undefined;
      const { pieces, keep, own } = portable;
      writer.begin();
      writer.number(keep);
      writer.tag(own.token === undefined ? 0 : 1);
      if (own.token !== undefined) writer.string(own.token);
      writer.tag(own.agentId === undefined ? 0 : 1);
      if (own.agentId !== undefined) writer.string(own.agentId);
      writePieces(writer, pieces);
      const plain = writer.take().bytes;
      const key = currentKey();
      counter += 1n;
      nonce.writeBigUInt64BE(counter, 4);
      const cipher = createCipheriv('aes-256-gcm', key.key, nonce);
      const head = Buffer.allocUnsafe(HEADER_BYTES);
      head[0] = VERSION;
      key.id.copy(head, 1);
      nonce.copy(head, 1 + KEY_ID_BYTES);
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      cipher.getAuthTag().copy(head, 1 + KEY_ID_BYTES + NONCE_BYTES);
      return Buffer.concat([head, body]).toString('base64');
    },

    /**
     * The redacted exchange of a sealed one, by `scan` (the secrets this instance knows now, and the
     * caller's own token and key); undefined when it cannot be opened here (sealed under a secret this
     * instance never held: a group of instances with another secret, `state_store_conflict`).
     */
    open(sealed: string, scan: ExchangeScan): JournalExchange | undefined {
      const bytes = Buffer.from(sealed, 'base64');
      if (bytes.length < HEADER_BYTES || bytes[0] !== VERSION) return undefined;
      currentKey();
      const key = keys.get(bytes.subarray(1, 1 + KEY_ID_BYTES).toString('hex'));
      if (!key) return undefined;
      let plain: Buffer;
      try {
        const decipher = createDecipheriv(
          'aes-256-gcm',
          key.key,
          bytes.subarray(1 + KEY_ID_BYTES, 1 + KEY_ID_BYTES + NONCE_BYTES),
        );
        decipher.setAuthTag(bytes.subarray(1 + KEY_ID_BYTES + NONCE_BYTES, HEADER_BYTES));
        plain = Buffer.concat([decipher.update(bytes.subarray(HEADER_BYTES)), decipher.final()]);
      } catch {
        return undefined;
      }
      const reader = new RecordReader(plain, refs);
      const keep = reader.number();
      const token = reader.tag() === 1 ? reader.string() : undefined;
      const agentId = reader.tag() === 1 ? reader.string() : undefined;
      const pieces = readPieces(reader);
      return redactExchange(pieces, keep, (text) => scan(text, { token, agentId }).redacted);
    },
  };
}

export type ExchangeSeal = ReturnType<typeof createExchangeSeal>;
