import fc from 'fast-check';
import { reproductionOf } from '../client/recorded-exchange.ts';
import { refusesToken } from '../tokens/token-ledger.ts';
import {
  type CheckContext,
  CheckFailure,
  type CheckOutcome,
  describeCall,
  failureMessage,
  Inconclusive,
  repeatRefusalOf,
} from './check-contract.ts';

/*
 * How a check runs its cases: a fast-check property over generated inputs (checkProperty), a fixed list
 * (checkEach) or one exchange (checkOnce), and what unobserved cases mean (settleUnobserved). The types and
 * the failure vocabulary they share with every check are in check-contract.ts.
 */

/**
 * Settles what the unobserved cases of a check mean. A case rate-limited beyond the waits on a call the
 * gateway never served in this run is the gateway's doing (`not-served`: a failure); on a call it did
 * serve, the user's --max-wait-seconds was too short (`max-wait`: inconclusive).
 */
export function settleUnobserved(
  ctx: CheckContext,
  cases: readonly Inconclusive[],
): CheckOutcome | undefined {
  if (cases.length === 0) return undefined;
  const unserved = cases.find(
    (c) =>
      (c.reason === 'max-wait' || c.reason === 'retry-after-untruthful' || c.reason === 'time-budget') &&
      c.exchange &&
      !ctx.client.answered(c.exchange.key),
  );
  if (unserved?.exchange) {
    const exchange = unserved.exchange;
    const asked = exchange.retryAfterUntruthful
      ? ` (after ${exchange.attempts} attempts, each waiting the Retry-After it asked: not truthful)`
      : exchange.retryAfterMs !== undefined
        ? ` (Retry-After ${Math.ceil(exchange.retryAfterMs / 1000)} s, beyond --max-wait-seconds ${ctx.maxWaitSeconds})`
        : ` (still so after ${exchange.attempts} attempts with backoff)`;
    return {
      verdict: 'fail',
      unobserved: 'not-served',
      message: `Expected the gateway to answer ${describeCall(exchange)} at least once in the run; every answer was 429${asked}, so this check could observe nothing. Fix: a gateway that serves nothing cannot pass; if a previous run used up the quota, run again once it has recovered`,
      reproduction: reproductionOf(exchange),
    };
  }
  const first = cases[0] as Inconclusive;
  const hint =
    first.reason === 'max-wait'
      ? '; raise --max-wait-seconds (the gateway served these calls earlier in the run)'
      : '';
  return {
    verdict: 'inconclusive',
    unobserved: first.reason,
    message: `${cases.length} case(s) could not be observed: ${first.message}${hint}`,
  };
}

/** A failing outcome as a CheckFailure states it; each caller adds the reproduction it can give. */
function failedOutcome(failure: CheckFailure) {
  const repeatRefused = repeatRefusalOf(failure);
  return {
    verdict: 'fail' as const,
    message: failureMessage(failure),
    ...(failure.unobserved && { unobserved: failure.unobserved }),
    ...(repeatRefused && { repeatRefused }),
    ...(failure.exchange?.tokenId !== undefined &&
      refusesToken(failure.exchange) && { realTokenRefused: true }),
  };
}

/**
 * Runs a fast-check property whose body sends real requests. A CheckFailure fails the check with the
 * shrunk counterexample, its curl reproduction and the seed and path that replay it; Inconclusive cases
 * make the check inconclusive (never a silent pass); anything else is reported as a suite error.
 */
export async function checkProperty<T>(
  ctx: CheckContext,
  arbitrary: fc.Arbitrary<T>,
  body: (value: T) => Promise<void>,
  options: {
    numRuns?: number;
    passMessage?: (runs: number) => string;
    /**
     * Values tried on every seed before the generated ones (fast-check `examples`): the boundaries real
     * servers have, which random generation would reach only by luck.
     */
    examples?: readonly T[];
  } = {},
): Promise<CheckOutcome> {
  const inconclusive: Inconclusive[] = [];
  const started = ctx.now();
  // The first case always goes; the others while the check's share of the time budget lasts (a gateway
  // with tight limits gets fewer cases, each kind of input still tried, rather than a check given up).
  const until = Math.min(ctx.caseDeadline ?? Number.POSITIVE_INFINITY, started + ctx.timeLimitMs);
  // Nor do they once the check has waited out the gateway's limits for longer than its allowance.
  const waitedBefore = ctx.client?.waitedMs ?? 0;
  const allowance = ctx.caseWaitAllowanceMs ?? Number.POSITIVE_INFINITY;
  const spent = () => ctx.now() > until || (ctx.client?.waitedMs ?? 0) - waitedBefore > allowance;
  let sent = 0;
  let notSent = 0;
  const property = fc.asyncProperty(arbitrary, async (value) => {
    // The boundary examples always go too: they are what every seed must try.
    if (sent >= Math.max(1, options.examples?.length ?? 0) && spent() && !ctx.path) {
      notSent += 1;
      return;
    }
    sent += 1;
    try {
      await body(value);
    } catch (error) {
      if (error instanceof Inconclusive) {
        inconclusive.push(error);
        return;
      }
      // The failure stands (its 5xx, if any, persisted through the client's retries): while fast-check
      // shrinks it, a 5xx is taken as it comes, or each smaller input would wait out three retries.
      if (error instanceof CheckFailure) ctx.client?.retryServerErrors?.(false);
      throw error;
    }
  });
  const examples = options.examples?.map((example) => [example] as [T]);
  // fast-check counts its examples among numRuns: they come on top of the generated cases.
  const numRuns = (options.numRuns ?? ctx.numRuns) + (examples?.length ?? 0);
  let details: fc.RunDetails<[T]>;
  try {
    details = await fc.check(property, {
      seed: ctx.seed,
      numRuns,
      path: ctx.path,
      ...(examples && examples.length > 0 && { examples }),
    });
  } finally {
    ctx.client?.retryServerErrors?.(true);
  }
  if (details.failed && details.errorInstance instanceof CheckFailure) {
    const failure = details.errorInstance;
    return {
      ...failedOutcome(failure),
      reproduction: {
        ...(failure.exchange ? reproductionOf(failure.exchange) : { curl: undefined }),
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
      unobserved: 'suite-error',
      message: `the check could not run: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const unobserved = settleUnobserved(ctx, inconclusive);
  if (unobserved) return unobserved;
  const held = sent - inconclusive.length;
  const fewer =
    notSent > 0
      ? ` (${notSent} more not sent: this check's share of the time budget went on waiting out the gateway's rate limits)`
      : '';
  return {
    verdict: 'pass',
    message: `${options.passMessage?.(held) ?? `held for ${held} generated cases`}${fewer}`,
    cases: { held, notSent },
  };
}

/**
 * Runs one property per labelled category, splitting the cases between them, so every category is
 * exercised on every run (a fault that only long tokens trigger, or only on one endpoint, is never missed
 * by chance). A counterexample in any category decides; its replay path is prefixed with the label, e.g.
 * `long@whoami:3:1`. Labels must not contain ':'.
 */
export async function checkEach<T>(
  ctx: CheckContext,
  categories: Record<string, fc.Arbitrary<T>>,
  body: (value: T, category: string) => Promise<void>,
  options: {
    runsPerCategory?: number;
    /** Per category, values tried on every seed before the generated ones (see checkProperty). */
    examples?: Record<string, readonly T[]>;
  } = {},
): Promise<CheckOutcome> {
  const labels = Object.keys(categories);
  const [replayLabel, ...rest] = ctx.path?.split(':') ?? [];
  const selected = ctx.path ? labels.filter((l) => l === replayLabel) : labels;
  const numRuns = options.runsPerCategory ?? Math.max(2, Math.ceil(ctx.numRuns / labels.length));
  const outcomes: CheckOutcome[] = [];
  // One allowance of waiting for the whole check, not one per category.
  const waitedBefore = ctx.client?.waitedMs ?? 0;
  const allowance = ctx.caseWaitAllowanceMs ?? Number.POSITIVE_INFINITY;
  for (const label of selected) {
    const sub = {
      ...ctx,
      path: ctx.path ? rest.join(':') : undefined,
      caseWaitAllowanceMs: allowance - ((ctx.client?.waitedMs ?? 0) - waitedBefore),
    };
    const outcome = await checkProperty(
      sub,
      categories[label] as fc.Arbitrary<T>,
      (value) => body(value, label),
      { numRuns, ...(options.examples?.[label] && { examples: options.examples[label] }) },
    );
    if (outcome.verdict === 'fail') {
      if (outcome.reproduction?.path) outcome.reproduction.path = `${label}:${outcome.reproduction.path}`;
      outcome.message = `[${label}] ${outcome.message}`;
      // A counterexample is the strongest verdict: a category that was merely never served waits.
      if (!outcome.unobserved) return outcome;
    }
    outcomes.push(outcome);
  }
  const unsure =
    outcomes.find((o) => o.verdict === 'fail') ?? outcomes.find((o) => o.verdict === 'inconclusive');
  if (unsure) return unsure;
  const held = outcomes.reduce((n, o) => n + (o.cases?.held ?? numRuns), 0);
  const notSent = outcomes.reduce((n, o) => n + (o.cases?.notSent ?? 0), 0);
  const fewer =
    notSent > 0
      ? `; ${notSent} more not sent: the check's share of the time budget went on waiting out the gateway's rate limits`
      : '';
  return {
    verdict: 'pass',
    message:
      notSent > 0
        ? `held for ${held} case(s), at least one in each of ${selected.length} categories (${selected.join(', ')})${fewer}`
        : `held for ${numRuns} case(s) in each of ${selected.length} categories (${selected.join(', ')})`,
    cases: { held, notSent },
  };
}

/**
 * Runs a check body once, without generated input (a fixed sequence of calls), with the same verdicts as
 * checkProperty: a CheckFailure fails (with the curl reproduction), an Inconclusive settles as for a
 * property (never served: a failure; a budget: inconclusive).
 */
export async function checkOnce(ctx: CheckContext, body: () => Promise<string>): Promise<CheckOutcome> {
  try {
    return { verdict: 'pass', message: await body() };
  } catch (error) {
    if (error instanceof CheckFailure)
      return {
        ...failedOutcome(error),
        ...(error.exchange && { reproduction: reproductionOf(error.exchange) }),
      };
    if (error instanceof Inconclusive) return settleUnobserved(ctx, [error]) as CheckOutcome;
    throw error;
  }
}
