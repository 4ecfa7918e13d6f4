import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { CannotRunError } from '../model/cannot-run-error.ts';
import type { CheckResult } from '../model/check-result.ts';

/**
 * An expected-results file (as MCP conformance's expected failures): the checks a run is known to leave
 * short of a pass, each with the verdict it gives instead. A listed verdict that happens does not fail the
 * run (a failure listed is not counted, a skip or an unobserved check listed does not make it exit 2); one
 * that no longer happens is stale and fails the run (exit 1), so the file cannot hide a change.
 *
 * ```yaml
 * # check id: the verdict expected instead of pass
 * auth.expired-token: skipped      # the identity provider cannot give an expired token in CI
 * ratelimit.burst-429: inconclusive
 * retry.sequential: fail           # known issue, fixed in the next release
 * ```
 */
export const EXPECTED_VERDICTS = ['fail', 'skipped', 'inconclusive'] as const;
export type ExpectedVerdict = (typeof EXPECTED_VERDICTS)[number];
export type ExpectedResults = Readonly<Record<string, ExpectedVerdict>>;

const fileSchema = z.record(
  z.string().regex(/^[a-z0-9-]+\.[a-z0-9.-]+$/, 'must be a check id, e.g. auth.expired-token'),
  z.enum(EXPECTED_VERDICTS, { error: `must be one of ${EXPECTED_VERDICTS.join(', ')}` }),
);

/**
 * Reads an expected-results file (YAML or JSON: a map of check id to verdict). Unknown ids are checked by
 * the runner against the checks it knows; a file that cannot be read or parsed is the run's mistake (exit 2).
 */
export function readExpectedResults(file: string): ExpectedResults {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CannotRunError(
      `cannot read the expected-results file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  let value: unknown;
  try {
    value = parseYaml(text) ?? {};
  } catch (error) {
    throw new CannotRunError(
      `the expected-results file ${file} is not YAML or JSON: ${(error as Error).message}`,
    );
  }
  const parsed = fileSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new CannotRunError(
    `the expected-results file ${file}: ${parsed.error.issues
      .map((issue) => `${issue.path.join('.') || 'its content'}: ${issue.message}`)
      .join('; ')} (a map of check id to fail, skipped or inconclusive)`,
  );
}

/** A listed verdict the run did not give: the expectation is stale. */
export interface StaleExpectation {
  id: string;
  expected: ExpectedVerdict;
  actual: CheckResult['verdict'];
}

/** The expectations the run's results no longer meet (checks the run did not select are left alone). */
export function staleExpectations(
  checks: readonly CheckResult[],
  expected: ExpectedResults = {},
): StaleExpectation[] {
  return checks
    .filter((c) => Object.hasOwn(expected, c.id) && expected[c.id] !== c.verdict)
    .map((c) => ({ id: c.id, expected: expected[c.id] as ExpectedVerdict, actual: c.verdict }));
}

/** Whether a check gave the verdict the expected-results file lists for it. */
export const asExpected = (check: Pick<CheckResult, 'id' | 'verdict'>, expected: ExpectedResults = {}) =>
  Object.hasOwn(expected, check.id) && expected[check.id] === check.verdict;
