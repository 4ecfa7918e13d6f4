import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test as fastCheckTest, fc } from '@fast-check/vitest';
import { expect } from 'vitest';

/*
 * Property tests, one result per commit. Every property of `npm test` (`test.prop` from here, in place of
 * @fast-check/vitest's) runs on one fixed seed, printed in its name, and then replays each counterexample
 * kept for it in the corpus (test/property-corpus.jsonl: one JSON line a counterexample, replayed by
 * fast-check's seed and path), so a commit gives the same verdicts on every machine, every day.
 * Exploring with fresh seeds is its own command (`npm run explore`, dev/explore.ts): there each property
 * runs on a random seed, longer, and a failure is written as the one corpus line that replays it.
 * Direct `fc.assert` calls in tests get the fixed seed too (property-setup.ts, vitest's setup file).
 */

/** The seed every property of `npm test` runs on (`PROPERTY_SEED=n` runs another, as exploring does). */
export const FIXED_PROPERTY_SEED = 424242;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The corpus of counterexamples found so far, relative to the repository. */
export const CORPUS_FILE = 'test/property-corpus.jsonl';

/** One line of the corpus: which property, and the seed and path that replay its counterexample. */
export interface CorpusLine {
  /** `<file relative to the repository> > <the property's name as given to test.prop>`. */
  test: string;
  seed: number;
  path: string;
  /** The counterexample as fast-check prints it (`fc.stringify` of the property's arguments). */
  counterexample: string;
  /** Optional: what it caught. */
  note?: string;
}

/** How the properties run: `fixed` (npm test) or `explore` (npm run explore sets PROPERTY_EXPLORE=1). */
export interface PropertyMode {
  explore: boolean;
  /** The seed (fixed mode), or undefined for a fresh random seed per property (explore). */
  seed: number | undefined;
  /** Explore: each property's declared runs times this, within `timeLimitMs`. */
  runsFactor: number;
  timeLimitMs: number;
  /** Explore: the file the corpus lines of failures are appended to. */
  out: string | undefined;
}

function integerFromEnv(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value)) throw new Error(`${name} must be an integer, got ${JSON.stringify(text)}`);
  return value;
}

export function propertyMode(): PropertyMode {
  const explore = process.env.PROPERTY_EXPLORE === '1';
  const seed = process.env.PROPERTY_SEED ? integerFromEnv('PROPERTY_SEED', 0) : undefined;
  return {
    explore,
    seed: explore ? seed : (seed ?? FIXED_PROPERTY_SEED),
    runsFactor: integerFromEnv('PROPERTY_RUNS_FACTOR', 10),
    timeLimitMs: integerFromEnv('PROPERTY_TIME_LIMIT_MS', 20_000),
    out: process.env.PROPERTY_EXPLORE_OUT || undefined,
  };
}

/** The corpus lines, parsed (a line that is not a corpus line is an error naming it). */
export function readCorpus(text = readFileSync(new URL(`../../${CORPUS_FILE}`, import.meta.url), 'utf8')) {
  return text.split('\n').flatMap((raw, i): CorpusLine[] => {
    if (raw.trim() === '') return [];
    const where = `${CORPUS_FILE}:${i + 1}`;
    let line: Partial<CorpusLine>;
    try {
      line = JSON.parse(raw) as Partial<CorpusLine>;
    } catch (error) {
      throw new Error(`${where}: not JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    if (
      typeof line.test !== 'string' ||
      !line.test.includes(' > ') ||
      !Number.isInteger(line.seed) ||
      typeof line.path !== 'string' ||
      line.path === '' ||
      typeof line.counterexample !== 'string'
    )
      throw new Error(
        `${where}: a corpus line is {"test":"<file> > <name>","seed":n,"path":"..","counterexample":".."}`,
      );
    return [line as CorpusLine];
  });
}

let corpus: CorpusLine[] | undefined;
const corpusFor = (key: string) => {
  corpus ??= readCorpus();
  return corpus.filter((line) => line.test === key);
};

type Args = unknown[];
type Predicate = (...args: Args) => unknown;
type Arbitraries = fc.Arbitrary<unknown>[] | Record<string, fc.Arbitrary<unknown>>;
type Params = fc.Parameters<Args>;
/** @fast-check/vitest's `test.prop`, as this module calls it (both of its forms, array and record). */
type Register = (
  arbitraries: Arbitraries,
  params: Params,
) => (name: string, body: Predicate, ms?: number) => void;

/** The arguments a property's predicate gets for fast-check's counterexample (a record is one argument). */
const argsOf = (arbitraries: Arbitraries, counterexample: unknown): Args =>
  Array.isArray(arbitraries) ? (counterexample as Args) : [counterexample];

const registered = new Map<string, Set<string>>();
/** `<file> > <name>`, the key of a property in the corpus; two properties of a file may not share a name. */
function keyOf(name: string): string {
  const testPath = expect.getState().testPath;
  if (!testPath) throw new Error(`property "${name}" is not declared in a test file`);
  const file = relative(ROOT, testPath).split('\\').join('/');
  const names = registered.get(file) ?? new Set<string>();
  if (names.has(name))
    throw new Error(`${file} has two properties named "${name}": the corpus cannot tell them apart`);
  registered.set(file, names.add(name));
  return `${file} > ${name}`;
}

/** Explore: a failure is written as the corpus line that replays it, then reported as fast-check does. */
function exploreReporter(key: string, arbitraries: Arbitraries, out: string | undefined) {
  return (details: fc.RunDetails<Args>) => {
    if (!details.failed) return;
    if (details.counterexamplePath !== null && details.counterexample !== null) {
      const line: CorpusLine = {
        test: key,
        seed: details.seed,
        path: details.counterexamplePath,
        counterexample: fc.stringify(argsOf(arbitraries, details.counterexample)),
      };
      const text = JSON.stringify(line);
      if (out) appendFileSync(out, `${text}\n`);
      process.stderr.write(`corpus line for ${CORPUS_FILE}:\n${text}\n`);
    }
    throw new Error(fc.defaultReportMessage(details));
  };
}

/**
 * A replay of one corpus line: the value at its seed and path must still be the counterexample it recorded
 * (else the arbitraries changed and the line replays something else: say so rather than pass on it).
 */
function replaying(line: CorpusLine, predicate: Predicate): Predicate {
  let first = true;
  return (...args) => {
    if (first) {
      first = false;
      const now = fc.stringify(args);
      if (now !== line.counterexample)
        throw new Error(
          `${CORPUS_FILE}: the line for "${line.test}" (seed ${line.seed}, path ${line.path}) no longer replays its counterexample (the arbitraries changed): it gives ${now}, the line recorded ${line.counterexample}. Find it again (npm run explore) or remove the line.`,
        );
    }
    return predicate(...args);
  };
}

/**
 * `test.prop` as @fast-check/vitest declares it, deterministic: on the fixed seed, then each corpus line of
 * the property (named `<name> [corpus k]`); in explore mode, on a fresh seed, for longer, and a failure
 * written as a corpus line.
 */
function prop(arbitraries: Arbitraries, params: Params = {}) {
  return (name: string, predicate: Predicate, timeout?: number) => {
    const key = keyOf(name);
    const mode = propertyMode();
    const register = (p: Params, title: string, body: Predicate, ms?: number) =>
      (fastCheckTest.prop as unknown as Register)(arbitraries, p)(title, body, ms);
    if (mode.explore) {
      const runs = (params.numRuns ?? fc.readConfigureGlobal().numRuns ?? 100) * mode.runsFactor;
      register(
        {
          ...params,
          seed: mode.seed,
          numRuns: runs,
          interruptAfterTimeLimit: mode.timeLimitMs,
          markInterruptAsFailure: false,
          reporter: exploreReporter(key, arbitraries, mode.out),
        },
        name,
        predicate,
        undefined,
      );
      return;
    }
    register({ ...params, seed: params.seed ?? mode.seed }, name, predicate, timeout);
    corpusFor(key).forEach((line, k) => {
      register(
        { ...params, seed: line.seed, path: line.path, endOnFailure: true },
        `${name} [corpus ${k + 1}]`,
        replaying(line, predicate),
        timeout,
      );
    });
  };
}

/** `test.prop` (and `fc`) for property tests: import these instead of @fast-check/vitest's. */
export const test = { prop: prop as unknown as (typeof fastCheckTest)['prop'] };
export { fc };
