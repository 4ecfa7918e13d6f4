import { beforeAll, describe, expect, it } from 'vitest';
import { serve } from '../mock-server/adapters/node-server.ts';
import { formatClientReport } from '../mock-server/client-report/report.ts';
import { createProxy } from '../mock-server/proxy/proxy.ts';
import {
  CLIENT_CATALOGUE,
  type ClientProgram,
  type RuleId,
  runProgramAt,
  scenarioGateway,
} from './clients/catalogue.ts';

/*
 * The client catalogue's agents through the proxy: each program talks to the proxy, which forwards to a
 * reference gateway with the program's scenario; the proxy's journal (not the gateway's) is graded. The
 * verdicts must be those the program has against the gateway directly (test/client-report-catalogue):
 * good programs pass, bad ones trip exactly their rules. A sample across the rules, good and bad, hand-written
 * and library clients; timing rules are required only when the program's own account says its waits held.
 */

// PROXY_CATALOGUE=all runs every program of the catalogue (slower; the sample keeps `npm test` short).
const SAMPLE =
  process.env.PROXY_CATALOGUE === 'all'
    ? CLIENT_CATALOGUE.map((p) => p.name)
    : [
        'well-behaved-agent',
        'ky-with-jitter',
        'reads-hostile-pages',
        'blind-retry-429',
        'storm-after-429',
        'token-base64-in-query',
        'retries-denied-tool',
        'resends-expired-token',
        'api-key-split-across-queries',
      ];

const _API_KEYS: Record<ClientProgram['agent'], string> = {
  'agent-verified': 'ak_verified_2b8d4f6a1c9e',
  'agent-early': 'ak_early_7c3e9a1b5d2f',
};

interface Outcome {
  program: ClientProgram;
  flagged: RuleId[];
  required: RuleId[];
  account: string;
  error?: string;
}

async function throughProxy(program: ClientProgram): Promise<Outcome> {
  const gateway = scenarioGateway(program);
  const target = await serve(gateway, { port: 0, log: () => {} });
  const proxy = createProxy({ target: target.url, log: () => {} });
  const front = await serve(proxy, { port: 0, log: () => {} });
  let error: string | undefined;
  try {
    error = await runProgramAt(program, gateway, front.url);
  } finally {
    await front.close();
    proxy.close();
    await target.close();
  }
  const report = proxy.gateway.clientReport(program.agent);
  const entries = proxy.gateway.journal.list({ agent: program.agent });
  const flagged = [...new Set(report.violations.map((v) => v.rule as RuleId))];
  const disturbed = program.timing?.length ? program.timingHeld?.(entries) : undefined;
  const required = program.rules.filter((rule) => !(disturbed && program.timing?.includes(rule)));
  return {
    program,
    flagged,
    required,
    account: `${program.name}: ${program.reason}\n\n${formatClientReport(report)}`,
    ...(error ? { error } : {}),
  };
}

const outcomes = new Map<string, Outcome>();
beforeAll(async () => {
  const programs = SAMPLE.map((name) => CLIENT_CATALOGUE.find((p) => p.name === name) as ClientProgram);
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < programs.length; k = next++) {
      const program = programs[k] as ClientProgram;
      outcomes.set(program.name, await throughProxy(program));
    }
  };
  await Promise.all([worker(), worker(), worker()]);
}, 180_000);

describe('the client catalogue through the proxy, in front of the reference gateway', () => {
  it('samples good and bad programs that exist', () => {
    const verdicts = SAMPLE.map((name) => CLIENT_CATALOGUE.find((p) => p.name === name)?.verdict);
    expect(verdicts).not.toContain(undefined);
    expect(verdicts).toContain('good');
    expect(verdicts).toContain('bad');
  });
  for (const name of SAMPLE) {
    it(`gives ${name} the verdict it has directly`, () => {
      const outcome = outcomes.get(name) as Outcome;
      expect(outcome.error, outcome.account).toBeUndefined();
      // Never a rule the program does not break; every rule it must trip in this run.
      expect(
        outcome.flagged.filter((r) => !outcome.program.rules.includes(r)),
        outcome.account,
      ).toEqual([]);
      expect(
        outcome.required.filter((r) => !outcome.flagged.includes(r)),
        outcome.account,
      ).toEqual([]);
    });
  }
});
