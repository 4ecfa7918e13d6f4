/**
 * The compact journal form `dev/journal-gc.ts` measures against today's one object per entry: the raw facts
 * of each request in typed-array columns (one slot per entry of the ring), strings that repeat (agent, token
 * fingerprint, method, path, operation) interned to small ids, and the request's bytes (its header lines and
 * its body up to the capture limit) copied into one byte ring shared by all entries. Nothing per entry is a
 * JavaScript object: the collector has nothing to trace or copy however many entries the ring holds, and a
 * request leaves only its own short-lived garbage. Entries are read back by slot (`bytesOf`, `factsOf`).
 */

/** Strings that repeat, as small ids (bounded by what the gateway knows: agents, tokens, routes). */
function createInterned() {
  const ids = new Map<string, number>();
  const names: string[] = [];
  return {
    id(text: string): number {
      let id = ids.get(text);
      if (id === undefined) {
        id = names.length;
        names.push(text);
        ids.set(text, id);
      }
      return id;
    },
    name: (id: number) => names[id] as string,
  };
}

export function createCompactJournal(capacity: number, bytesPerEntry = 192) {
  const at = new Float64Array(capacity);
  const realMs = new Float64Array(capacity);
  const writtenMs = new Float64Array(capacity);
  const durationMs = new Float64Array(capacity);
  const openedMs = new Float64Array(capacity);
  const remaining = new Float64Array(capacity);
  const status = new Uint16Array(capacity);
  const connection = new Int32Array(capacity);
  const connectionSeq = new Int32Array(capacity);
  const agent = new Uint32Array(capacity);
  const token = new Uint32Array(capacity);
  const route = new Uint32Array(capacity);
  // The request's bytes: where they start in the byte ring (as a running total, so an entry whose bytes the
  // ring overwrote since is recognised), and how many.
  const bytesAt = new Float64Array(capacity);
  const bytesLength = new Uint32Array(capacity);
  const ring = new Uint8Array(capacity * bytesPerEntry);
  let written = 0;
  const interned = createInterned();

  const put = (bytes: Uint8Array) => {
    const start = written % ring.length;
    const first = Math.min(bytes.length, ring.length - start);
    ring.set(bytes.subarray(0, first), start);
    if (first < bytes.length) ring.set(bytes.subarray(first), 0);
    written += bytes.length;
  };

  return {
    /**
     * Records request `n` (slot n % capacity): its facts, its header lines and body bytes, and the first
     * `keep` bytes of the answer's body.
     */
    record(n: number, body: Uint8Array, headers: readonly string[], answer: string, keep: number) {
      const slot = n % capacity;
      at[slot] = 1_764_000_000_000 + n;
      realMs[slot] = n * 40;
      writtenMs[slot] = n * 40 + 1;
      durationMs[slot] = 0.5;
      openedMs[slot] = 12.34;
      remaining[slot] = 999_999_999 - n;
      status[slot] = 200;
      connection[slot] = n % 2000;
      connectionSeq[slot] = Math.floor(n / 2000);
      agent[slot] = interned.id('agent-1');
      token[slot] = interned.id('fp_6b1c0d2e9f');
      route[slot] = interned.id('POST /v1/web/search');
      bytesAt[slot] = written;
      let length = 0;
      for (const header of headers) {
        const line = Buffer.from(`${header}\n`, 'latin1');
        put(line);
        length += line.length;
      }
      put(body);
      const answerBytes = Buffer.from(answer.length <= keep ? answer : answer.slice(0, keep));
      put(answerBytes);
      bytesLength[slot] = length + body.length + answerBytes.length;
    },

    /** The bytes kept of the entry in `slot`, or undefined once the byte ring has overwritten them. */
    bytesOf(slot: number): Uint8Array | undefined {
      const length = bytesLength[slot] as number;
      const from = bytesAt[slot] as number;
      if (written - from > ring.length) return undefined;
      const out = new Uint8Array(length);
      for (let i = 0; i < length; i++) out[i] = ring[(from + i) % ring.length] as number;
      return out;
    },

    /** The entry in `slot` as facts (a short-lived object, made for the reader). */
    factsOf(slot: number) {
      return {
        at: at[slot],
        real_ms: realMs[slot],
        written_ms: writtenMs[slot],
        duration_ms: durationMs[slot],
        status: status[slot],
        connection: connection[slot],
        connection_seq: connectionSeq[slot],
        connection_opened_ms: openedMs[slot],
        agent: interned.name(agent[slot] as number),
        token: interned.name(token[slot] as number),
        route: interned.name(route[slot] as number),
        remaining: remaining[slot],
      };
    },
  };
}

export type CompactJournal = ReturnType<typeof createCompactJournal>;

/** The raw facts of request `n` as one flat object of numbers and interned strings (the `flat` form). */
export function flatEntry(n: number, requestId: string, bytes: Uint8Array) {
  return {
    at: 1_764_000_000_000 + n,
    real_ms: n * 40,
    written_ms: n * 40 + 1,
    duration_ms: 0.5,
    connection_opened_ms: 12.34,
    status: 200,
    connection: n % 2000,
    connection_seq: Math.floor(n / 2000),
    agent: 'agent-1',
    token: 'fp_6b1c0d2e9f',
    route: 'POST /v1/web/search',
    remaining: 999_999_999 - n,
    request_id: requestId,
    bytes,
  };
}

/** The same facts as one line of text per entry (the `line` form): one string, parsed when read. */
export const lineEntry = (n: number, requestId: string, bytes: Uint8Array) =>
  `${JSON.stringify({ ...flatEntry(n, requestId, new Uint8Array(0)), bytes: undefined })}\n${Buffer.from(bytes).toString('latin1')}`;
