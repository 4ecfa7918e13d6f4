import fc from 'fast-check';
import { curlFor } from './curl.ts';
import type { Exchange, SuiteClient } from './http-client.ts';
import type { Level, Reproduction, Verdict } from './types.ts';

/** A protected endpoint as the suite calls it; tool bodies are configurable (their fields are "not shown"). */
export interface Endpoint {
  name: 'whoami' | 'web.search' | 'web.fetch';
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

/** Everything a check may use. */
export interface CheckContext {
  client: SuiteClient;
  has: { token: boolean; deniedToken: boolean };
  endpoints: Record<Endpoint['name'], Endpoint>;
  /** The tool the denied token may not call. */
  deniedTool: 'web.search' | 'web.fetch';
  rateLimitBudget: number;
  maxWaitSeconds: number;
  seed: number;
  numRuns: number;
  /** Replays one counterexample (with `seed`) instead of generating. */
  path?: string;
  /** Longest time one check may generate cases for. */
  timeLimitMs: number;
  /** Computes a shared observation once per run (the rate-limit checks share one burst). */
  memo<T>(key: string, compute: () => Promise<T>): Promise<T>;
  log(line: string): void;
}

export type CheckOutcome = { verdict: Verdict; message: string; reproduction?: Reproduction };

/** A conformance check: a small named unit tied to a spec section. */
export interface Check {
  /** Stable id, e.g. `auth.missing-token`: CI filters and reports use it. */
  id: string;
  title: string;
  /** The spec section it enforces, e.g. `§5.3`. */
  specRef: string;
  level: Level;
  /** What the target must provide; without it the check is skipped, naming the missing option. */
  needs?: ('token' | 'deniedToken')[];
  run(ctx: CheckContext): Promise<CheckOutcome>;
}

/** A broken rule: what the spec expects, what the gateway did, and how to fix it. */
export class CheckFailure extends Error {
  readonly expected: string;
  readonly actual: string;
  readonly fix: string;
  readonly exchange?: Exchange;

  constructor(details: { expected: string; actual: string; fix: string; exchange?: Exchange }) {
    super(`expected ${details.expected}; got ${details.actual}`);
    this.name = 'CheckFailure';
    this.expected = details.expected;
    this.actual = details.actual;
    this.fix = details.fix;
    this.exchange = details.exchange;
  }
}

/** The case could not be observed (e.g. rate-limited past the retry cap): neither pass nor fail. */
export class Inconclusive extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'Inconclusive';
  }
}

/** One line describing a response, for failure messages. */
export function describeResponse(exchange: Exchange): string {
  const { response } = exchange;
  if (response.status === 0) return `no response (${response.error ?? 'connection failed'})`;
  const code = (response.json as { code?: unknown } | undefined)?.code;
  const type = response.headers['content-type'] ?? 'no content-type';
  const body =
    typeof code === 'string'
      ? `code ${JSON.stringify(code.slice(0, 120))}`
      : `body ${JSON.stringify(response.text.slice(0, 120))}`;
  return `${response.status} (${type}) with ${body}`;
}

/** Raises Inconclusive when the client gave up on a 429 (the suite's own traffic was rate-limited). */
export function observed(exchange: Exchange): Exchange {
  if (exchange.rateLimitExhausted) {
    throw new Inconclusive(
      `${exchange.request.method} ${exchange.request.path} was still rate-limited after backing off`,
    );
  }
  return exchange;
}

/** The `code` of a JSON error body, if any. */
export const codeOf = (exchange: Exchange): unknown =>
  (exchange.response.json as { code?: unknown } | undefined)?.code;

/**
 * Runs a fast-check property whose body sends real requests. A CheckFailure fails the check with the
 * shrunk counterexample, its curl reproduction and the seed and path that replay it; Inconclusive cases
 * make the check inconclusive (never a silent pass); anything else is reported as a suite error.
 */
export async function checkProperty<T>(
  ctx: CheckContext,
  arbitrary: fc.Arbitrary<T>,
  body: (value: T) => Promise<void>,
  options: { numRuns?: number; passMessage?: (runs: number) => string } = {},
): Promise<CheckOutcome> {
  const inconclusive: string[] = [];
  const property = fc.asyncProperty(arbitrary, async (value) => {
    try {
      await body(value);
    } catch (error) {
      if (error instanceof Inconclusive) {
        inconclusive.push(error.message);
        return;
      }
      throw error;
    }
  });
  const numRuns = options.numRuns ?? ctx.numRuns;
  const details = await fc.check(property, {
    seed: ctx.seed,
    numRuns,
    path: ctx.path,
    plugins: [fc.interruptAfterTimeLimit(ctx.timeLimitMs)],
  });
  if (details.failed && details.errorInstance instanceof CheckFailure) {
    const failure = details.errorInstance;
    return {
      verdict: 'fail',
      message: `Expected ${failure.expected}; got ${failure.actual}. Fix: ${failure.fix}`,
      reproduction: {
        curl: failure.exchange ? curlFor(failure.exchange) : undefined,
        seed: details.seed,
        path: details.counterexamplePath ?? undefined,
        counterexample: fc.stringify(details.counterexample),
      },
    };
  }
  if (details.failed && details.errorInstance) {
    const error = details.errorInstance;
    if (error instanceof Error && error.name === 'TokenCommandError') throw error;
    return {
      verdict: 'inconclusive',
      message: `the check could not run: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (inconclusive.length > 0) {
    return {
      verdict: 'inconclusive',
      message: `${inconclusive.length} of ${details.numRuns} cases could not be observed: ${inconclusive[0]}`,
    };
  }
  if (details.interrupted && details.numRuns < numRuns) {
    return {
      verdict: 'inconclusive',
      message: `time limit reached after ${details.numRuns} of ${numRuns} cases`,
    };
  }
  return {
    verdict: 'pass',
    message: options.passMessage?.(details.numRuns) ?? `held for ${details.numRuns} generated cases`,
  };
}

/**
 * Runs one property per labelled category, splitting the cases between them, so every category is
 * exercised on every run (a fault that only long tokens trigger is never missed by chance). The first
 * failing category decides; its replay path is prefixed with the label, e.g. `long:3:1`.
 */
export async function checkEach<T>(
  ctx: CheckContext,
  categories: Record<string, fc.Arbitrary<T>>,
  body: (value: T, category: string) => Promise<void>,
): Promise<CheckOutcome> {
  const labels = Object.keys(categories);
  const [replayLabel, ...rest] = ctx.path?.split(':') ?? [];
  const selected = ctx.path ? labels.filter((l) => l === replayLabel) : labels;
  const numRuns = Math.max(2, Math.ceil(ctx.numRuns / labels.length));
  const outcomes: CheckOutcome[] = [];
  for (const label of selected) {
    const sub = { ...ctx, path: ctx.path ? rest.join(':') : undefined };
    const outcome = await checkProperty(
      sub,
      categories[label] as fc.Arbitrary<T>,
      (value) => body(value, label),
      { numRuns },
    );
    if (outcome.verdict === 'fail') {
      if (outcome.reproduction?.path) outcome.reproduction.path = `${label}:${outcome.reproduction.path}`;
      outcome.message = `[${label}] ${outcome.message}`;
      return outcome;
    }
    outcomes.push(outcome);
  }
  const unsure = outcomes.find((o) => o.verdict === 'inconclusive');
  if (unsure) return unsure;
  return {
    verdict: 'pass',
    message: `held for ${numRuns} cases in each of ${selected.length} categories (${selected.join(', ')})`,
  };
}
