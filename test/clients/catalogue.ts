import { Agent as HttpAgent } from 'node:http';
import { Agent, fetch as undiciFetch } from 'undici';
import { serve } from '../../mock-server/adapters/node-server.ts';
import { type ClientReport, unobservedRules } from '../../mock-server/client-report/report.ts';
import { createGateway, type Gateway } from '../../mock-server/gateway.ts';
import { faultSpecSchema } from '../../mock-server/scenarios/faults.ts';
import { ATTRIBUTION } from './attribution.ts';
import { BODIES } from './bodies.ts';
import { FAILURE_CLASSES } from './failure-classes.ts';
import { FAMILIES } from './families.ts';
import { HAND_WRITTEN } from './hand-written.ts';
import { HELD_OUT } from './held-out.ts';
import { LIBRARIES } from './libraries.ts';
import { REGRESSIONS } from './regressions.ts';
import { STORMS } from './storms.ts';
import type { ClientContext, ClientProgram, RuleId } from './types.ts';

export type { ClientProgram, RuleId };

/**
 * The client catalogue: every program, good and bad, with the verdict the client report must give it. Run
 * against the reference gateway by `npm test` (test/client-report-catalogue.test.ts) and by
 * `npm run client-matrix`, which prints the confusion matrix.
 */
export const CLIENT_CATALOGUE: readonly ClientProgram[] = [
  ...HAND_WRITTEN,
  ...LIBRARIES,
  ...FAMILIES,
  ...HELD_OUT,
  ...FAILURE_CLASSES,
  ...STORMS,
  ...BODIES,
  ...ATTRIBUTION,
  ...REGRESSIONS,
];

/** The fixture agents' API keys (fixtures/config/default.yaml). */
export const API_KEYS: Record<ClientProgram['agent'], string> = {
  'agent-verified': 'ak_verified_2b8d4f6a1c9e',
  'agent-early': 'ak_early_7c3e9a1b5d2f',
};

/** What running one program gave: the report of its agent, and how that compares with its verdict. */
export interface ProgramOutcome {
  program: ClientProgram;
  report: ClientReport;
  /** Rules the report flagged. */
  flagged: RuleId[];
  /** Rules it should have flagged and did not, among those it must flag in this run. */
  missed: RuleId[];
  /** Rules it flagged that the program does not break. */
  falseFlags: RuleId[];
  /**
   * Rules the report could not observe (NOT OBSERVED, with the reason: never a pass), such as
   * backoff-with-jitter when the machine's stalls took most of every wait; a bad program is not taken to
   * escape them, a good one not to break them.
   */
  unobserved: RuleId[];
  /** Why the timing rules were not required this run (load disturbed the waits), if so. */
  timingDisturbed?: string;
  /** The program threw (its own bug, or the gateway's): the outcome is not a verdict. */
  error?: string;
  ms: number;
}

/** A gateway with the program's scenario (config and faults) laid on. */
export function scenarioGateway(program: ClientProgram): Gateway {
  const gateway = createGateway({ config: program.scenario?.config ?? {}, log: () => {} });
  for (const fault of program.scenario?.faults ?? []) gateway.faults.add(faultSpecSchema.parse(fault));
  return gateway;
}

/**
 * The tokens a program is given: one the gateway minted for its agent, and with `scenario.staleToken` one
 * minted before it and revoked (the agent's tokens of an earlier generation).
 */
export function programTokens(
  program: ClientProgram,
  gateway: Gateway,
): Pick<ClientContext, 'token' | 'staleToken'> {
  if (!program.scenario?.staleToken) return { token: gateway.mintToken(program.agent) };
  const staleToken = gateway.mintToken(program.agent);
  gateway.runtime.registry.revokeTokens(program.agent);
  return { token: gateway.mintToken(program.agent), staleToken };
}

/**
 * Runs a program against `baseUrl` with a token from `gateway`, over its own undici pool and keep-alive
 * node:http agent (both closed afterwards); resolves with the error it threw, if any.
 */
export async function runProgramAt(
  program: ClientProgram,
  gateway: Gateway,
  baseUrl: string,
  /** How its token is minted instead (through a proxy: the proxy learns the key). */
  mint?: (baseUrl: string, apiKey: string) => Promise<string>,
): Promise<string | undefined> {
  const pool = new Agent();
  const httpAgent = new HttpAgent({ keepAlive: true });
  try {
    const tokens = programTokens(program, gateway);
    await program.run({
      baseUrl,
      apiKey: API_KEYS[program.agent],
      ...tokens,
      ...(mint ? { token: await mint(baseUrl, API_KEYS[program.agent]) } : {}),
      fetch: (input, init) => undiciFetch(input, { ...init, dispatcher: pool }),
      httpAgent,
    });
    return undefined;
  } catch (thrown) {
    return thrown instanceof Error ? thrown.message : String(thrown);
  } finally {
    httpAgent.destroy();
    await pool.close();
  }
}

/**
 * Runs one program against a reference gateway of its own, over node:http on loopback (so the journal has
 * connection facts), with its scenario, and grades its agent. Everything it opened is closed afterwards.
 */
export async function runClientProgram(program: ClientProgram): Promise<ProgramOutcome> {
  return (await runClientProgramWithGateway(program)).outcome;
}

/** `runClientProgram`, with the gateway it ran against (its journal, for tools that keep what they read). */
export async function runClientProgramWithGateway(
  program: ClientProgram,
): Promise<{ outcome: ProgramOutcome; gateway: Gateway }> {
  const started = performance.now();
  const gateway = scenarioGateway(program);
  const server = await serve(gateway, { port: 0, log: () => {} });
  let error: string | undefined;
  try {
    error = await runProgramAt(program, gateway, server.url);
  } finally {
    await server.close();
  }
  return {
    outcome: gradeOutcome(program, gateway, { error, ms: Math.round(performance.now() - started) }),
    gateway,
  };
}

/**
 * Rules decided in process by the delivery facts (causality: which answers the agent had in hand), whatever
 * the machine's load: never waived for a run whose waits load disturbed. Rules judged from measured waits
 * (backoff-with-jitter) are time in process too.
 */
export const CAUSAL_IN_PROCESS: readonly RuleId[] = ['no-parallel-storm'];

/**
 * Grades a program's run from its gateway's journal: the rules it must flag this run are all of
 * `program.rules` but its timing rules when load disturbed its waits (`timingHeld`), and never one of
 * `causal` (rules decided by facts that load cannot disturb in this run). A timing rule that fires on a
 * disturbed run is not a false flag either: the waits it read were not the program's.
 */
export function gradeOutcome(
  program: ClientProgram,
  gateway: Pick<Gateway, 'clientReport' | 'journal'>,
  run: { error?: string; ms: number; causal?: readonly RuleId[] },
): ProgramOutcome {
  const report = gateway.clientReport(program.agent);
  const entries = gateway.journal.list({ agent: program.agent });
  const flagged = [...new Set(report.violations.map((v) => v.rule as RuleId))];
  const unobserved = unobservedRules(report).map((r) => r.id as RuleId);
  const waived = (program.timing ?? []).filter((rule) => !run.causal?.includes(rule));
  const timingDisturbed = waived.length > 0 ? program.timingHeld?.(entries) : undefined;
  const required = program.rules.filter((rule) => !(timingDisturbed && waived.includes(rule)));
  return {
    program,
    report,
    flagged,
    missed: required.filter((rule) => !flagged.includes(rule) && !unobserved.includes(rule)),
    // A rule judged from waits alone says nothing, either way, of a run whose waits load disturbed.
    falseFlags: flagged.filter(
      (rule) => !program.rules.includes(rule) && !(timingDisturbed && waived.includes(rule)),
    ),
    unobserved,
    ...(timingDisturbed ? { timingDisturbed } : {}),
    ...(run.error ? { error: run.error } : {}),
    ms: run.ms,
  };
}

/** Runs programs, at most `parallel` at a time (each has its own gateway, so they do not meet). */
export async function runCatalogue(
  programs: readonly ClientProgram[] = CLIENT_CATALOGUE,
  parallel = 6,
): Promise<ProgramOutcome[]> {
  const outcomes: ProgramOutcome[] = new Array(programs.length);
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < programs.length; k = next++)
      outcomes[k] = await runClientProgram(programs[k] as ClientProgram);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, programs.length) }, worker));
  return outcomes;
}

/** The confusion matrix of a catalogue run: bad programs caught, good ones passed. */
export function confusionMatrix(outcomes: readonly ProgramOutcome[]) {
  const bad = outcomes.filter((o) => o.program.verdict === 'bad');
  const good = outcomes.filter((o) => o.program.verdict === 'good');
  return {
    badCaught: bad.filter((o) => !o.error && o.missed.length === 0 && o.falseFlags.length === 0).length,
    bad: bad.length,
    goodPassed: good.filter((o) => !o.error && o.flagged.length === 0).length,
    good: good.length,
    /** Rules flagged that a program does not break, over all programs. */
    falseFlags: outcomes.reduce((sum, o) => sum + o.falseFlags.length, 0),
    /** Bad programs whose timing rules were not required because load disturbed their waits. */
    disturbed: outcomes.filter((o) => o.timingDisturbed).length,
  };
}
