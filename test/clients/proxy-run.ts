import { serve } from '../../mock-server/adapters/node-server.ts';
import { createGateway, type Gateway } from '../../mock-server/gateway.ts';
import { createProxy } from '../../mock-server/proxy/proxy.ts';
import { faultSpecSchema } from '../../mock-server/scenarios/faults.ts';
import {
  API_KEYS,
  type ClientProgram,
  gradeOutcome,
  type ProgramOutcome,
  runProgramAt,
} from './catalogue.ts';

/**
 * What the proxy knows of the agents' own API keys: `declared` (both fixture agents' keys, in its options,
 * as a team declares its agents, as `--api-keys-file` gives them), `learned` (none declared: the agent's
 * token is minted through the proxy, `POST /idp/token` with its key, so the proxy learns the key then), or
 * `none` (a gateway whose agents it does not know, and a token minted elsewhere).
 */
export type ProxyKeys = 'declared' | 'learned' | 'none';

/**
 * Runs one program through the proxy: a reference gateway with the program's config is the target, the
 * program's faults are armed on the proxy (so the proxy's own fault path answers them, as QA uses it
 * against staging), and the proxy's journal, not the target's, is graded as the HTTP run is. The proxy's own
 * config knows no agent (`agents: []`): what it knows of keys is only what `keys` gives it or it learns.
 */
export async function runProgramThroughProxy(
  program: ClientProgram,
  keys: ProxyKeys = 'declared',
): Promise<ProgramOutcome> {
  return (await runProgramThroughProxyWithGateway(program, keys)).outcome;
}

/** `runProgramThroughProxy`, with the proxy's own gateway (its journal) beside the outcome. */
export async function runProgramThroughProxyWithGateway(
  program: ClientProgram,
  keys: ProxyKeys = 'declared',
): Promise<{ outcome: ProgramOutcome; gateway: Gateway }> {
  const started = performance.now();
  const gateway = createGateway({ config: program.scenario?.config ?? {}, log: () => {} });
  const target = await serve(gateway, { port: 0, log: () => {} });
  const proxy = createProxy({
    target: target.url,
    log: () => {},
    config: { agents: [] },
    ...(keys === 'declared' ? { apiKeys: { ...API_KEYS } } : {}),
  });
  for (const fault of program.scenario?.faults ?? []) proxy.gateway.faults.add(faultSpecSchema.parse(fault));
  const front = await serve(proxy, { port: 0, log: () => {} });
  let error: string | undefined;
  try {
    error = await runProgramAt(program, gateway, front.url, keys === 'learned' ? mintThrough : undefined);
  } finally {
    await front.close();
    proxy.close();
    await target.close();
  }
  const ms = Math.round(performance.now() - started);
  return { outcome: gradeOutcome(program, proxy.gateway, { error, ms }), gateway: proxy.gateway };
}

/** A token minted through the proxy (`POST /idp/token` with the agent's key), which learns the key. */
async function mintThrough(baseUrl: string, apiKey: string): Promise<string> {
  const response = await fetch(`${baseUrl}/idp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: apiKey }),
  });
  const { token } = (await response.json()) as { token?: string };
  if (!token) throw new Error(`the proxy's /idp/token minted no token: ${response.status}`);
  return token;
}

/** Runs programs through the proxy, at most `parallel` at a time (each has its own gateway and proxy). */
export async function runCatalogueThroughProxy(
  programs: readonly ClientProgram[],
  parallel = 4,
  keys: ProxyKeys = 'declared',
): Promise<ProgramOutcome[]> {
  const outcomes: ProgramOutcome[] = new Array(programs.length);
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < programs.length; k = next++)
      outcomes[k] = await runProgramThroughProxy(programs[k] as ClientProgram, keys);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, programs.length) }, worker));
  return outcomes;
}
