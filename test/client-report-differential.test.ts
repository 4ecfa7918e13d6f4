import { syncBuiltinESMExports } from 'node:module';
import { setupServer } from 'msw/node';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatClientReport, unobservedRules } from '../mock-server/client-report/report.ts';
import { CLIENT_CATALOGUE, type ProgramOutcome, type RuleId, runCatalogue } from './clients/catalogue.ts';
import { runCatalogueThroughProxy } from './clients/proxy-run.ts';
import { NOT_IN_PROCESS, runCatalogueInProcess } from './support/in-process-catalogue.ts';
import { unobservedByLoad } from './support/unobserved-by-load.ts';

/*
 * One verdict whichever way the agent runs: every program of the client catalogue is run over HTTP
 * (node:http, connection facts) and through the proxy twice (in front of a reference gateway, its faults armed on
 * the proxy; the agents' keys declared in its options, as --api-keys-file gives them, and then none declared,
 * each agent's token minted through the proxy, which learns the key), and every one that can run in process also in
 * process (msw, delivery facts); each must have the same rules flagged every way, every rule observed, and
 * its own verdict every way. Only what holds on a loaded machine is compared: a rule judged from measured
 * waits alone (a program's `timing` rules) is left out of the comparison for a run whose waits, by the
 * program's own account, load disturbed.
 */

const inProcess = CLIENT_CATALOGUE.filter((p) => !NOT_IN_PROCESS[p.name]);
const overHttp = new Map<string, ProgramOutcome>();
const viaMsw = new Map<string, ProgramOutcome>();
const viaProxy = new Map<string, ProgramOutcome>();
const viaProxyLearned = new Map<string, ProgramOutcome>();

beforeAll(async () => {
  // Over HTTP and through the proxy first, with no msw in the way.
  for (const outcome of await runCatalogue(CLIENT_CATALOGUE, 6)) overHttp.set(outcome.program.name, outcome);
  for (const outcome of await runCatalogueThroughProxy(CLIENT_CATALOGUE, 6))
    viaProxy.set(outcome.program.name, outcome);
  for (const outcome of await runCatalogueThroughProxy(CLIENT_CATALOGUE, 6, 'learned'))
    viaProxyLearned.set(outcome.program.name, outcome);
  const server = setupServer();
  server.listen({ onUnhandledFrame: 'error' });
  try {
    for (const outcome of await runCatalogueInProcess(inProcess, server, 1))
      viaMsw.set(outcome.program.name, outcome);
  } finally {
    server.close();
    // node:http's ESM exports back to the real functions.
    syncBuiltinESMExports();
  }
}, 900_000);

const account = (http: ProgramOutcome, msw: ProgramOutcome) =>
  `${http.program.name}: ${http.program.reason}\n\nOver HTTP:\n${formatClientReport(http.report)}\n\nIn process (msw):\n${formatClientReport(msw.report)}`;

/**
 * The rules compared: all, but a program's timing rules when either run's waits were disturbed, and a rule
 * either run could not observe (NOT OBSERVED, with its reason: the machine's stalls took most of the waits,
 * or what told a reaction from a request on its way).
 */
const compared = (flagged: readonly RuleId[], http: ProgramOutcome, msw: ProgramOutcome) =>
  flagged
    .filter((rule) => !((http.timingDisturbed || msw.timingDisturbed) && http.program.timing?.includes(rule)))
    .filter((rule) => !http.unobserved.includes(rule) && !msw.unobserved.includes(rule))
    .sort();

/** Rules a run could not observe but for the machine's load (the only thing load may take from a path). */
const unobservedButByLoad = (o: ProgramOutcome) =>
  unobservedRules(o.report).filter((r) => !unobservedByLoad(r.unobserved));

describe('one verdict over HTTP, in process (msw) and through the proxy', () => {
  for (const program of inProcess) {
    it(`${program.name}: the same rules either way`, (ctx) => {
      const http = overHttp.get(program.name) as ProgramOutcome;
      const msw = viaMsw.get(program.name) as ProgramOutcome;
      expect(msw.error, account(http, msw)).toBeUndefined();
      expect(http.error, account(http, msw)).toBeUndefined();
      // Requests reached the in-process gateway, with what the agent had in hand for each.
      expect(msw.report.requests, account(http, msw)).toBeGreaterThan(0);
      expect(msw.report.without_connection, account(http, msw)).toBeUndefined();
      expect(compared(msw.flagged, http, msw), account(http, msw)).toEqual(compared(http.flagged, http, msw));
      // And the program's own verdict in process.
      expect(msw.falseFlags, account(http, msw)).toEqual([]);
      expect(msw.missed, account(http, msw)).toEqual([]);
      for (const o of [http, msw])
        if (o.timingDisturbed)
          ctx.annotate(
            `timing rules not compared (${o === http ? 'over HTTP' : 'in process'}): ${o.timingDisturbed}`,
            'notice',
          );
    });
  }

  for (const [keys, runs] of [
    ['declared', viaProxy],
    ['learned', viaProxyLearned],
  ] as const)
    for (const program of CLIENT_CATALOGUE) {
      it(`${program.name}: the same rules through the proxy (keys ${keys}) as over HTTP, every rule observed`, (ctx) => {
        const http = overHttp.get(program.name) as ProgramOutcome;
        const proxy = runs.get(program.name) as ProgramOutcome;
        const shown = `${account(http, proxy).replace('In process (msw)', `Through the proxy (keys ${keys})`)}`;
        expect(proxy.error, shown).toBeUndefined();
        expect(proxy.report.requests, shown).toBeGreaterThan(0);
        expect(compared(proxy.flagged, http, proxy), shown).toEqual(compared(http.flagged, http, proxy));
        expect(proxy.falseFlags, shown).toEqual([]);
        expect(proxy.missed, shown).toEqual([]);
        expect(unobservedButByLoad(proxy), shown).toEqual([]);
        for (const o of [http, proxy])
          for (const rule of o.unobserved)
            ctx.annotate(
              `${rule} not observed (${o === http ? 'over HTTP' : 'through the proxy'})`,
              'notice',
            );
        for (const o of [http, proxy])
          if (o.timingDisturbed)
            ctx.annotate(
              `timing rules not compared (${o === http ? 'over HTTP' : 'through the proxy'}): ${o.timingDisturbed}`,
              'notice',
            );
      });
    }

  it('leaves out only programs msw cannot intercept, each with the reason', () => {
    const left = CLIENT_CATALOGUE.filter((p) => NOT_IN_PROCESS[p.name]).map((p) => p.name);
    expect(left).toEqual(Object.keys(NOT_IN_PROCESS));
    expect(inProcess.length).toBeGreaterThanOrEqual(CLIENT_CATALOGUE.length - 2);
  });
});
