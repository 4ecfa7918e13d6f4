import { afterAll, beforeAll, describe, it } from 'vitest';
import { formatSpecRef } from '../vocabulary/spec-ref.ts';
import type { Check } from './checks/check-contract.ts';
import type { CheckResult } from './model/check-result.ts';
import { formatSummary } from './reporters/console.ts';
import {
  type ConformanceOptions,
  type ConformanceReport,
  exitCodeFor,
  runConformance,
  selectChecks,
} from './run/runner.ts';
import { remedyOf } from './run/unobserved.ts';

export interface VitestConformanceOptions extends Omit<ConformanceOptions, 'onResult' | 'only'> {
  /** Check ids to register (default: all). */
  only?: readonly string[];
  /**
   * Fail SHOULD checks that could not observe their rule too (default: as `strict`). An unobserved MUST
   * check, or one that could not run for want of an input (an expired or revoked token, the tier), always
   * fails its test, with the reason and the option that would let it run, unless its id is in
   * `allowUnobserved` (then it is skipped, saying it was accepted).
   */
  failOnInconclusive?: boolean;
  /** Fail on SHOULD checks too (default true: inside your own tests you usually want every rule). */
  strict?: boolean;
}

/** CLI option names in a text as this front-end's option names: `--expired-token` as `expiredToken (--expired-token)`. */
const camelOptions = (text: string) =>
  text.replace(
    /--([a-z-]+)/g,
    (_, o: string) => `${o.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase())} (--${o})`,
  );

type Judged = Pick<VitestConformanceOptions, 'strict' | 'failOnInconclusive' | 'allowUnobserved'>;

/**
 * What one check's test does with its result: fail with a message, skip with one, or pass (neither).
 * Green means seen: a MUST check that failed, could not observe its rule, or could not run for want of an
 * input fails its test (naming what would let it run), unless its id is in `allowUnobserved`.
 */
export function testOutcome(
  check: Pick<Check, 'id' | 'level'>,
  result: CheckResult,
  resolved: Judged,
): { fail?: string; skip?: string } {
  const accepted = resolved.allowUnobserved?.includes(check.id) ?? false;
  if (result.verdict === 'fail') {
    if (check.level === 'SHOULD' && resolved.strict === false)
      return { skip: `SHOULD failed (not strict): ${result.message}` };
    const r = result.reproduction;
    return {
      fail: [
        result.message,
        r?.curl && `reproduce: ${r.curl}`,
        r?.seed !== undefined && r.path && `seed ${r.seed}, path "${r.path}"`,
      ]
        .filter(Boolean)
        .join('\n'),
    };
  }
  if (result.verdict === 'inconclusive') {
    const binding = check.level === 'MUST' || (resolved.failOnInconclusive ?? resolved.strict !== false);
    if (binding && !accepted)
      return {
        fail: `not observed${result.unobserved ? ` (${result.unobserved})` : ''}: ${result.message}${result.unobserved ? `\nWhat would let it observe: ${camelOptions(remedyOf(result.unobserved))}` : ''}\nTo accept it unobserved, add '${check.id}' to allowUnobserved.`,
      };
    return { skip: `inconclusive${accepted ? ' (accepted in allowUnobserved)' : ''}: ${result.message}` };
  }
  if (result.verdict === 'skipped' && result.enabledBy) {
    if (check.level === 'MUST' && !accepted)
      return {
        fail: `not run: ${result.message}\nGive ${camelOptions(result.enabledBy)} to run it, or add '${check.id}' to allowUnobserved to accept it unrun.`,
      };
    return { skip: `skipped${accepted ? ' (accepted in allowUnobserved)' : ''}: ${result.message}` };
  }
  if (result.verdict !== 'pass') return { skip: `${result.verdict}: ${result.message}` };
  return {};
}

/**
 * Registers every conformance check as a vitest test against a gateway. Options may be a function,
 * called in beforeAll, so the target can be started first (e.g. your gateway on a free port). `only`
 * given by that function runs just those checks; the others are reported as skipped.
 *
 * @example
 * describeConformance('my gateway', async () => ({ baseUrl: server.url, token: await login('bot'), deniedToken: await login('guest') }));
 */
export function describeConformance(
  name: string,
  options: VitestConformanceOptions | (() => VitestConformanceOptions | Promise<VitestConformanceOptions>),
  testTimeoutMs = 120_000,
) {
  const staticOnly = typeof options === 'function' ? undefined : options.only;
  const checks: readonly Check[] = selectChecks(staticOnly);
  describe(name, () => {
    let run: Promise<{ report: ConformanceReport; resolved: VitestConformanceOptions }>;
    const results = new Map<string, CheckResult>();

    beforeAll(() => {
      // One run for the whole group: the checks share a client, a seed and a rate-limit burst.
      run = (async () => {
        const resolved = typeof options === 'function' ? await options() : options;
        // Tests are registered before a function's options are known: narrow the run to its `only` here.
        const selected = resolved.only ? selectChecks(resolved.only) : checks;
        const report = await runConformance({
          ...resolved,
          only: selected.map((c) => c.id),
          onResult: (r) => results.set(r.id, r),
        });
        return { report, resolved };
      })();
      // Surface "could not run" in every test rather than as an unhandled rejection.
      run.catch(() => {});
    });
    afterAll(async () => {
      const done = await run.catch(() => undefined);
      // The exit code the CLI would give for this run (vitest's own result is what counts here).
      if (done)
        process.stdout.write(
          `${formatSummary(done.report, exitCodeFor(done.report, done.resolved.strict !== false))}\n`,
        );
    });

    for (const check of checks) {
      it(
        `${check.id} [${check.level} ${formatSpecRef(check.specRef)}] ${check.title}`,
        async (ctx) => {
          const { resolved } = await run;
          const result = results.get(check.id);
          if (!result && resolved.only && !resolved.only.includes(check.id)) ctx.skip('not selected by only');
          if (!result) throw new Error(`${check.id} did not run`);
          const outcome = testOutcome(check, result, resolved);
          if (outcome.fail !== undefined) throw new Error(outcome.fail);
          if (outcome.skip !== undefined) ctx.skip(outcome.skip);
        },
        testTimeoutMs,
      );
    }
  });
}
