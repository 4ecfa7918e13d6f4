import { Agent as HttpAgent } from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import type { SetupServer } from 'msw/node';
import { gatewayHandlers } from '../../mock-server/adapters/msw.ts';
import type { Gateway } from '../../mock-server/gateway.ts';
import {
  CAUSAL_IN_PROCESS,
  type ClientProgram,
  gradeOutcome,
  type ProgramOutcome,
  programTokens,
  scenarioGateway,
} from '../clients/catalogue.ts';
import type { ClientContext } from '../clients/types.ts';

const API_KEYS: Record<ClientProgram['agent'], string> = {
  'agent-verified': 'ak_verified_2b8d4f6a1c9e',
  'agent-early': 'ak_early_7c3e9a1b5d2f',
};

/**
 * Programs of the catalogue that cannot run in process, and why: msw intercepts the global fetch and
 * node:http, not a client that brings its own socket layer.
 */
export const NOT_IN_PROCESS: Partial<Record<string, string>> = {
  'undici-retry-agent-defaults':
    "undici's request() with its own RetryAgent dispatcher: its sockets are undici's, which msw does not intercept",
  'undici-pool-storm-after-429':
    "undici's fetch with its own Pool dispatcher: its sockets are undici's, which msw does not intercept",
};

/**
 * One catalogue program in process: its own gateway behind msw handlers on a host of its own (so programs
 * can run side by side on one msw server), the global fetch and a node:http agent, which msw intercepts.
 * Made in three steps so that nothing slow and synchronous (making a gateway loads its corpus: tens to
 * hundreds of ms; grading) runs while another program is timing its waits: `prepare` every program, `run`
 * them, then `grade` each as `runClientProgram` grades the HTTP run.
 */
export function prepareInProcess(program: ClientProgram, host: string) {
  const gateway = scenarioGateway(program);
  const baseUrl = `http://${host}`;
  const handlers = gatewayHandlers(gateway, { baseUrl });
  const tokens = programTokens(program, gateway);
  let error: string | undefined;
  let ms = 0;
  return {
    program,
    /** Its gateway (the journal, for tools that keep what they read). */
    gateway,
    /** The msw handlers of its gateway, on the server while it runs. */
    handlers,
    async run(): Promise<void> {
      const started = performance.now();
      const httpAgent = new HttpAgent({ keepAlive: true });
      try {
        await program.run({
          baseUrl,
          apiKey: API_KEYS[program.agent],
          ...tokens,
          fetch: ((input: string, init?: RequestInit) =>
            fetch(input, init)) as unknown as ClientContext['fetch'],
          httpAgent,
        });
      } catch (thrown) {
        error = thrown instanceof Error ? thrown.message : String(thrown);
      } finally {
        httpAgent.destroy();
        ms = Math.round(performance.now() - started);
      }
    },
    grade(): ProgramOutcome {
      // In process, a rule decided by delivery facts is required whatever load did to the waits.
      return gradeOutcome(program, gateway, { error, ms, causal: CAUSAL_IN_PROCESS });
    },
  };
}

/**
 * Prepares, runs (at most `parallel` at a time) and grades programs in process on one msw server. ESM
 * imports of node:http (`import { request } from 'node:http'`) are bound when the module loads, before msw
 * patches `http.request`: `syncBuiltinESMExports()` hands them the patched one (and the real one back).
 */
export async function runCatalogueInProcess(
  programs: readonly ClientProgram[],
  server: SetupServer,
  parallel = 6,
): Promise<ProgramOutcome[]> {
  return (await runCatalogueInProcessWithGateways(programs, server, parallel)).map((r) => r.outcome);
}

/** `runCatalogueInProcess`, with each program's gateway beside its outcome. */
export async function runCatalogueInProcessWithGateways(
  programs: readonly ClientProgram[],
  server: SetupServer,
  parallel = 6,
): Promise<{ outcome: ProgramOutcome; gateway: Gateway }[]> {
  const prepared = programs.map((p, k) => prepareInProcess(p, `program-${k}.gateway.test`));
  // Only the running programs' handlers are on the server: msw tries every handler on every request.
  const active = new Set<(typeof prepared)[number]>();
  const onServer = () => server.resetHandlers(...[...active].flatMap((p) => p.handlers));
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < prepared.length; k = next++) {
      const program = prepared[k] as (typeof prepared)[number];
      active.add(program);
      onServer();
      await program.run();
      active.delete(program);
      onServer();
    }
  };
  syncBuiltinESMExports();
  try {
    await Promise.all(Array.from({ length: Math.min(parallel, prepared.length) }, worker));
  } finally {
    server.resetHandlers();
  }
  return prepared.map((p) => ({ outcome: p.grade(), gateway: p.gateway }));
}
