import { describe, expect, it } from 'vitest';
import type { Check } from '../checks/check-contract.ts';
import type { CheckResult } from '../model/check-result.ts';
import type { Exchange } from '../model/suite-request.ts';
import { createCrossCheckBlame, TOKEN_RULE } from './run-blame.ts';
import { REPEAT_RULE } from './run-check.ts';

const check = (id: string) => ({ id }) as Check;
const result = (id: string, verdict: CheckResult['verdict'], message = 'own'): CheckResult =>
  ({ id, title: id, specRef: [], level: 'MUST', verdict, message, durationMs: 0, requests: 0 }) as never;
const repeat = {
  request: { method: 'GET', path: '/v1/whoami' },
  url: 'http://127.0.0.1:1/v1/whoami',
  credential: 'valid',
  key: 'GET /v1/whoami valid',
  sentHeaders: [],
  response: { status: 409, headers: {}, text: '{}', json: {} },
  attempts: 1,
  rateLimitExhausted: false,
  transientRetries: 0,
} as unknown as Exchange;

describe('blame across the checks of a run', () => {
  it('a repeat refused as a duplicate is passed to retry.sequential, which fails with it', async () => {
    const checks = [check('auth.a'), check(REPEAT_RULE)];
    const blame = createCrossCheckBlame(checks, true, []);
    const met = await blame.repeats(0, result('auth.a', 'pass'), repeat);
    expect(met.message).toContain(`Blamed on ${REPEAT_RULE}`);
    const judged = await blame.repeats(1, result(REPEAT_RULE, 'pass', 'held'));
    expect(judged.verdict).toBe('fail');
    expect(judged.message).toContain('met by auth.a');
    expect(judged.message).toContain('its own repeats held (held)');
  });

  it('without retry.sequential still to run (or without a token) a repeat stays with the check that met it', async () => {
    const late = createCrossCheckBlame([check(REPEAT_RULE), check('auth.a')], true, []);
    expect((await late.repeats(1, result('auth.a', 'fail'), repeat)).message).toBe('own');
    const noToken = createCrossCheckBlame([check('auth.a'), check(REPEAT_RULE)], false, []);
    expect((await noToken.repeats(0, result('auth.a', 'fail'), repeat)).message).toBe('own');
    const none = createCrossCheckBlame([check(REPEAT_RULE)], true, []);
    expect((await none.repeats(0, result(REPEAT_RULE, 'pass'))).verdict).toBe('pass');
  });

  it('a check that passed its rule but handed a repeat over fails with it when nothing later judges it', async () => {
    const alone = createCrossCheckBlame([check('retry.concurrent')], true, []);
    const judged = await alone.repeats(0, result('retry.concurrent', 'pass', 'held'), repeat);
    expect(judged.verdict).toBe('fail');
    expect(judged.message).toContain('met by retry.concurrent; its own repeats held (held)');
    const later = createCrossCheckBlame([check('retry.concurrent'), check(REPEAT_RULE)], true, []);
    const handed = await later.repeats(0, result('retry.concurrent', 'pass', 'held'), repeat);
    expect(handed.verdict).toBe('pass');
    expect(handed.message).toContain(`Blamed on ${REPEAT_RULE}`);
  });

  it('failures on a refused real token name auth.valid-token-accepted once that check fails', () => {
    const blame = createCrossCheckBlame([], true, []);
    const refused = result('authz.x', 'fail');
    const other = result('authz.y', 'fail');
    blame.tokens('authz.x', refused, true);
    blame.tokens('authz.y', other, false);
    blame.tokens(TOKEN_RULE, result(TOKEN_RULE, 'pass'), false);
    expect(refused.message).toBe('own');
    blame.tokens(TOKEN_RULE, result(TOKEN_RULE, 'fail'), false);
    expect(refused.message).toContain(`${TOKEN_RULE} (spec §4 rule 2) reports the evidence`);
    expect(other.message).toBe('own');
  });
});
