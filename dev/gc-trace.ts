/*
 * What a server process allocates, read from outside: run it under `node --trace-gc-nvp` and each of its
 * collections prints one line naming, among others, the bytes allocated since the collection before
 * (`allocated=`). The sum over the lines printed during a round, over the requests the round answered, is
 * the bytes a request allocates (HTTP included); the first collection's count began a little before the
 * round, a few hundred kilobytes in a round of several hundred megabytes.
 */

/** The node option that makes a process print its collections (one line each, on stdout). */
export const TRACE_GC = '--trace-gc-nvp';

/** A number field (`name=123.4`) of one collection's line. */
export const gcField = (line: string, name: string) =>
  Number(new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1]);

/** The collections' lines in a process's output. */
export const gcLines = (output: string) => output.split('\n').filter((line) => line.includes(' gc='));

/** The bytes the collections printed in `output` say were allocated (0 when none ran). */
export function allocatedBytes(output: string): number {
  let sum = 0;
  for (const line of gcLines(output)) sum += gcField(line, 'allocated') || 0;
  return sum;
}

/**
 * Measures what a process allocates over a stretch of its life: `start()` before, then the bytes allocated
 * since, per answered request. `output` is everything the process printed so far.
 */
export function allocationSince(output: () => string): (answered: number) => number {
  const from = output().length;
  return (answered) => (answered > 0 ? allocatedBytes(output().slice(from)) / answered : Number.NaN);
}
