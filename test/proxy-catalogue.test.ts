import { beforeAll, describe, expect, it } from 'vitest';
import { formatClientReport, reportPasses, unobservedRules } from '../mock-server/client-report/report.ts';
import { CLIENT_CATALOGUE, type ClientProgram, type ProgramOutcome } from './clients/catalogue.ts';
import { HELD_OUT } from './clients/held-out.ts';
import { type ProxyKeys, runProgramThroughProxy } from './clients/proxy-run.ts';
import { unobservedByLoad } from './support/unobserved-by-load.ts';

/*
 * The client catalogue's agents through the proxy: each program talks to the proxy, which forwards to a
 * reference gateway with the program's config; the program's faults are armed on the proxy; the proxy's
 * journal (not the gateway's) is graded. The proxy's own config knows no agent: it knows the agents' API
 * keys only as declared in its options, or as learned from a token exchange passing through it. The
 * verdicts must be those the program has against the gateway directly (test/client-report-catalogue):
 * good programs pass, bad ones trip exactly their rules. A sample across the rules, good and bad,
 * hand-written and library clients, and every program of the held-out families; timing rules are required
 * only when the program's own account says its waits held. Where the proxy does not know an agent's key,
 * the own-key check is reported not observed: never a pass.
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
        ...HELD_OUT.map((p) => p.name),
      ];
/** Programs that mint their own token through the proxy: it learns their key, none is declared. */
const MINTING = ['mints-token-then-leaks-key', 'mints-token-keeps-key', 'well-behaved-agent'];
/** Programs leaking their own key, and a good one, through a proxy that knows no key and learns none. */
const BLIND = ['own-key-json-query-and-path', 'sdk-default-key-params', 'summarises-paste-topic'];

const program = (name: string) => CLIENT_CATALOGUE.find((p) => p.name === name) as ClientProgram;
const account = (o: ProgramOutcome) =>
  `${o.program.name}: ${o.program.reason}\n\n${formatClientReport(o.report)}`;

const outcomes = new Map<string, ProgramOutcome>();
const blind = new Map<string, ProgramOutcome>();
beforeAll(async () => {
  const runs: { name: string; keys: ProxyKeys; into: Map<string, ProgramOutcome> }[] = [
    ...SAMPLE.map((name) => ({
      name,
      keys: (MINTING.includes(name) ? 'none' : 'declared') as ProxyKeys,
      into: outcomes,
    })),
    ...BLIND.map((name) => ({ name, keys: 'none' as ProxyKeys, into: blind })),
  ];
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < runs.length; k = next++) {
      const run = runs[k] as (typeof runs)[number];
      run.into.set(run.name, await runProgramThroughProxy(program(run.name), run.keys));
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}, 240_000);

describe('the client catalogue through the proxy, in front of the reference gateway', () => {
  it('samples good and bad programs that exist', () => {
    const verdicts = SAMPLE.map((name) => CLIENT_CATALOGUE.find((p) => p.name === name)?.verdict);
    expect(verdicts).not.toContain(undefined);
    expect(verdicts).toContain('good');
    expect(verdicts).toContain('bad');
  });
  for (const name of SAMPLE) {
    it(`gives ${name} the verdict it has directly${MINTING.includes(name) ? ' (its key learned from /idp/token)' : ''}`, (ctx) => {
      const outcome = outcomes.get(name) as ProgramOutcome;
      expect(outcome.error, account(outcome)).toBeUndefined();
      // Never a rule the program does not break; every rule it must trip in this run; every rule observed.
      expect(outcome.falseFlags, account(outcome)).toEqual([]);
      expect(outcome.missed, account(outcome)).toEqual([]);
      // Every rule observed, but those the machine's load took (the loop stalling, a connection accepted at
      // the first poll after a lone answer: never a pass, never the proxy's doing; the differential test
      // reads them alike).
      expect(
        unobservedRules(outcome.report).filter((r) => !unobservedByLoad(r.unobserved)),
        account(outcome),
      ).toEqual([]);
      // A good program passes: no violation, and no rule unobserved but for the stalls (then not a pass).
      if (outcome.program.verdict === 'good')
        expect(
          reportPasses(outcome.report) ||
            (outcome.report.violations.length === 0 &&
              unobservedRules(outcome.report).every((r) => unobservedByLoad(r.unobserved))),
          account(outcome),
        ).toBe(true);
      if (outcome.timingDisturbed)
        ctx.annotate(`timing rules not required this run: ${outcome.timingDisturbed}`, 'notice');
    });
  }

  for (const name of BLIND)
    it(`${name}, through a proxy that knows no API key: the own-key check is not observed, never passed`, () => {
      const outcome = blind.get(name) as ProgramOutcome;
      expect(outcome.error, account(outcome)).toBeUndefined();
      expect(outcome.flagged, account(outcome)).toEqual([]);
      const [rule] = unobservedRules(outcome.report);
      expect(rule?.id, account(outcome)).toBe('no-secrets-in-requests');
      expect(rule?.unobserved, account(outcome)).toMatch(
        /own API key was unknown to the proxy for \d+ of \d+ requests/,
      );
      expect(reportPasses(outcome.report)).toBe(false);
      expect(formatClientReport(outcome.report)).toMatch(/NOT OBSERVED {2}no-secrets-in-requests/);
      expect(formatClientReport(outcome.report)).toMatch(/not a pass\.$/);
    });
});
