/** Where slices are written: a node:http ServerResponse, or anything with its write/drain/close contract. */
export interface SliceSink {
  /** false: the sink's buffer is full; write no more until 'drain'. */
  write(chunk: string): boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  readonly destroyed: boolean;
}

// Taken when the module loads: a test's fake timers (vi.useFakeTimers fakes setImmediate) must not stop an
// in-process report read or export halfway, waiting for a turn nobody runs.
const realSetImmediate = setImmediate;
/** A turn of the event loop (timers and other requests run), whatever fake timers a test installed since. */
export const nextTurn = () => new Promise<void>((resolve) => realSetImmediate(resolve));

/**
 * Writes a long answer (an NDJSON export) slice by slice: each slice is made only when the one before is
 * written, the event loop turns between two (other requests are served in between), and once the sink says
 * its buffer is full (`write` returned false) nothing more is made or written until it drains. So memory holds
 * about one slice per reader however slowly it reads, and no slice holds the event loop longer than its own
 * entries take. Stops (and closes the source) when the sink is destroyed (the client went away). Resolves
 * with the number of slices written; a source that throws rejects (the caller then destroys the sink, so the
 * client sees a cut transfer, never a short answer that looks whole).
 */
export async function writeSlices(
  slices: Iterable<string> | AsyncIterable<string>,
  sink: SliceSink,
  turn: () => Promise<void> = nextTurn,
): Promise<number> {
  let written = 0;
  for await (const slice of slices) {
    if (sink.destroyed) break;
    written += 1;
    if (!sink.write(slice)) await drained(sink);
    // Always a turn of the event loop as well: on loopback a socket often drains at once, and its 'drain'
    // comes on the tick queue, so waiting for it alone would never let a timer or another request in.
    await turn();
    if (sink.destroyed) break;
  }
  return written;
}

/** Resolves at the sink's next 'drain', or when it closes (a reader that went away never drains). */
function drained(sink: SliceSink): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      sink.off('drain', done);
      sink.off('close', done);
      resolve();
    };
    sink.once('drain', done);
    sink.once('close', done);
  });
}
