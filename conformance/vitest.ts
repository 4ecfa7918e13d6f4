import { afterAll, beforeAll, describe, it } from 'vitest';
import { formatSpecRef } from '../vocabulary/spec-ref.ts';
import type { Check } from './check.ts';
import { formatSummary } from './reporters/console.ts';
import {
  type ConformanceOptions,
  type ConformanceReport,
  exitCodeFor,
  runConformance,
  selectChecks,
} from './runner.ts';
import type { CheckResult } from './types.ts';
import { remedyOf } from './unobserved.ts';

export interface VitestConformanceOptions extends Omit<ConformanceOptions, 'onResult' | 'only'> {
  /** Check ids to register (default: all). */
  only?: readonly string[];
  /**
   * Fail SHOULD checks that could not observe their rule too (default: as `strict`). An unobserved MUST
   * check always fails its test, with the reason and what would let it observe, unless its id is in
   * `allowUnobserved` (then it is skipped, saying it was accepted).
   */
  failOnInconclusive?: boolean;
  /** Fail on SHOULD checks too (default true: inside your own tests you usually want every rule). */
  strict?: boolean;
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
          if (result.verdict === 'fail') {
            if (check.level === 'SHOULD' && resolved.strict === false)
              ctx.skip(`SHOULD failed (not strict): ${result.message}`);
            const r = result.reproduction;
            throw new Error(
              [
                result.message,
                r?.curl && `reproduce: ${r.curl}`,
                r?.seed !== undefined && r.path && `seed ${r.seed}, path "${r.path}"`,
              ]
                .filter(Boolean)
                .join('\n'),
            );
          }
          if (result.verdict === 'inconclusive') {
            const accepted = resolved.allowUnobserved?.includes(check.id) ?? false;
            const binding =
              check.level === 'MUST' || (resolved.failOnInconclusive ?? resolved.strict !== false);
            if (binding && !accepted)
              throw new Error(
                `not observed${result.unobserved ? ` (${result.unobserved})` : ''}: ${result.message}${result.unobserved ? `\nWhat would let it observe: ${remedyOf(result.unobserved).replace(/--([a-z-]+)/g, (_, o: string) => `${o.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase())} (--${o})`)}` : ''}\nTo accept it unobserved, add '${check.id}' to allowUnobserved.`,
              );
            ctx.skip(`inconclusive${accepted ? ' (accepted in allowUnobserved)' : ''}: ${result.message}`);
          }
          if (result.verdict !== 'pass') ctx.skip(`${result.verdict}: ${result.message}`);
        },
        testTimeoutMs,
      );
    }
  });
}
