import { setTimeout as sleep } from 'node:timers/promises';
import type { MaybePromise } from '../maybe-promise.ts';
import type { Policy } from '../policy/policy.ts';
import type { ToolSpec } from './tool-spec.ts';

/** What the run-tool stage uses: each tool's simulated latency. */
export interface RunToolDeps {
  readonly policy: Pick<Policy, 'tools'>;
}

/**
 * The run-tool stage: the tool's simulated backend latency (real time, when configured), then its provider;
 * the result serialised once. A synchronous provider (the fixtures) without latency answers without a tick.
 */
export function runTool<T>(deps: RunToolDeps, spec: ToolSpec<T>, body: T): MaybePromise<string> {
  const latency = deps.policy.tools[spec.tool]?.latency_ms ?? 0;
  if (latency > 0) return sleep(latency).then(() => serialise(spec.run(body)));
  return serialise(spec.run(body));
}

const serialise = (result: unknown): MaybePromise<string> =>
  result instanceof Promise ? result.then((value) => JSON.stringify(value)) : JSON.stringify(result);
