import { setTimeout as sleep } from 'node:timers/promises';
import type { CallContext, ToolSpec } from './context.ts';

/**
 * The run-tool stage: the tool's simulated backend latency (real time, when configured), then its provider;
 * the result serialised once. A synchronous provider (the fixtures) without latency answers without a tick.
 */
export function runTool<T>(ctx: CallContext, spec: ToolSpec<T>, body: T): string | Promise<string> {
  const latency = ctx.runtime.policy.tools[spec.tool].latency_ms;
  if (latency > 0) return sleep(latency).then(() => serialise(spec.run(body)));
  return serialise(spec.run(body));
}

const serialise = (result: unknown): string | Promise<string> =>
  result instanceof Promise ? result.then((value) => JSON.stringify(value)) : JSON.stringify(result);
