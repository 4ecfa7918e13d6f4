import type { CheckResult, Level, Unobserved } from '../model/check-result.ts';
import { asExpected, type ExpectedResults } from '../suite/expected-results.ts';

/**
 * What would let a check observe its rule, per reason it could not: the CLI option, the GitHub Action
 * input, and a sentence. `option` is undefined when no option of the user's can help (the gateway's own
 * doing, or a bug of the suite): then only fixing that, or accepting the check with --allow-unobserved, does.
 */
export const UNOBSERVED_REMEDY: Record<Unobserved, { option?: string; input?: string; text: string }> = {
  'not-served': { text: 'the gateway never served the call: a failure, not a budget' },
  'max-wait': {
    option: '--max-wait-seconds',
    input: 'max-wait-seconds',
    text: 'the gateway asked for a longer wait than --max-wait-seconds: raise it',
  },
  'retry-after-untruthful': {
    text: 'the gateway kept answering 429 after every wait its Retry-After asked for: make its Retry-After truthful (ratelimit.retry-after-honoured), or accept this check with --allow-unobserved',
  },
  'rate-limit-budget': {
    option: '--rate-limit-budget',
    input: 'rate-limit-budget',
    text: 'no 429 within --rate-limit-budget requests: raise it past the limit (or accept this check with --allow-unobserved when the limit is beyond any budget)',
  },
  'token-refused': {
    option: '--token-command',
    input: 'token-command',
    text: 'the valid token stopped being accepted mid-run: give --token-command so the suite can mint a fresh one',
  },
  'time-budget': {
    option: '--time-budget-seconds',
    input: 'time-budget-seconds',
    text: "waiting out the gateway's limits would overrun the run's time budget: raise --time-budget-seconds",
  },
  'suite-error': { text: 'the check itself could not run (a bug in the suite: please report it)' },
};

/** One line naming what would let the check observe, for reports: "raise --max-wait-seconds (...)". */
export function remedyOf(reason: Unobserved, form: 'cli' | 'action' = 'cli'): string {
  const remedy = UNOBSERVED_REMEDY[reason];
  const name = form === 'action' ? remedy.input : remedy.option;
  return name ? `${remedy.text.replace(remedy.option ?? '', name)} [${name}]` : remedy.text;
}

/** Whether a check did not observe its rule: inconclusive, or skipped for want of an input the user did not give. */
export const unobservedCheck = (c: CheckResult) =>
  c.verdict === 'inconclusive' || (c.verdict === 'skipped' && c.enabledBy !== undefined);

/**
 * The checks that leave the run unable to say "conforms": a MUST check (with strict, a SHOULD too) that
 * could not observe its rule (inconclusive), or could not run for want of an input (skipped, naming the
 * option that enables it), unless the user accepted it by id (--allow-unobserved) or listed that verdict
 * in an expected-results file.
 */
export function blockingUnobserved(
  checks: readonly CheckResult[],
  strict: boolean,
  allowed: readonly string[] = [],
  expected: ExpectedResults = {},
): CheckResult[] {
  const binding = (level: Level) => level === 'MUST' || strict;
  return checks.filter(
    (c) => unobservedCheck(c) && binding(c.level) && !allowed.includes(c.id) && !asExpected(c, expected),
  );
}

/** One line naming what would let an unobserved check observe: its remedy, or the options it needs. */
export function unobservedRemedy(c: CheckResult, form: 'cli' | 'action' = 'cli'): string {
  // The Action's inputs have the options' names (without the dashes).
  if (c.verdict === 'skipped' && c.enabledBy)
    return `give ${form === 'action' ? c.enabledBy.replace(/--([a-z-]+)/g, '$1') : c.enabledBy}`;
  return c.unobserved ? remedyOf(c.unobserved, form) : c.message;
}
