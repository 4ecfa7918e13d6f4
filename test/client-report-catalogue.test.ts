import { beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_RULES, formatClientReport } from '../mock-server/client-report/report.ts';
import { CLIENT_CATALOGUE, confusionMatrix, type ProgramOutcome, runCatalogue } from './clients/catalogue.ts';

/*
 * The client catalogue (test/clients/) against the reference gateway over HTTP: every good program
 * passes every rule, every bad one trips exactly its rules. Only what holds on a loaded machine is asserted:
 * a good program is never flagged, however slow the run; a bad one is caught by what does not depend on
 * timing (connection facts, what a request means, streaks, what it carried). A rule that can only be
 * judged from measured waits (backoff schedules, requests sent together) is required when the program's
 * waits, as the gateway measured them, are still what the program meant; otherwise the test says so.
 */

const outcomes = new Map<string, ProgramOutcome>();
beforeAll(async () => {
  for (const outcome of await runCatalogue(CLIENT_CATALOGUE, 6)) outcomes.set(outcome.program.name, outcome);
}, 150_000);

const account = (o: ProgramOutcome) =>
  `${o.program.name}: ${o.program.reason}\n\n${formatClientReport(o.report)}`;

describe('the client catalogue, against the reference gateway over HTTP', () => {
  for (const program of CLIENT_CATALOGUE) {
    it(`${program.verdict === 'good' ? 'passes' : 'catches'} ${program.name}`, (ctx) => {
      const outcome = outcomes.get(program.name) as ProgramOutcome;
      expect(outcome.error, account(outcome)).toBeUndefined();
      expect(outcome.falseFlags, account(outcome)).toEqual([]);
      expect(outcome.missed, account(outcome)).toEqual([]);
      if (outcome.timingDisturbed)
        ctx.annotate(`timing rules not required this run: ${outcome.timingDisturbed}`, 'notice');
    });
  }

  it('holds a bad program for every rule, and a good one meeting what each rule judges', () => {
    const caughtBy = new Set(CLIENT_CATALOGUE.flatMap((p) => p.rules));
    expect([...caughtBy].sort()).toEqual(CLIENT_RULES.map((r) => r.id).sort());
    const names = CLIENT_CATALOGUE.map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    for (const p of CLIENT_CATALOGUE) {
      if (p.verdict === 'good') expect(p.rules, p.name).toEqual([]);
      else expect(p.rules.length, p.name).toBeGreaterThan(0);
      expect(p.reason.length, p.name).toBeGreaterThan(40);
      // A timing rule is one of the client rules (tripped, or kept, as the program means), read off waits.
      for (const rule of p.timing ?? []) expect([...caughtBy], p.name).toContain(rule);
      if (p.timing?.length) expect(p.timingHeld, p.name).toBeTypeOf('function');
    }
    const matrix = confusionMatrix([...outcomes.values()]);
    expect(matrix.good + matrix.bad).toBe(CLIENT_CATALOGUE.length);
  });
});
