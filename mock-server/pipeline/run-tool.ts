import { setTimeout as sleep } from 'node:timers/promises';
import type { MaybePromise } from '../maybe-promise.ts';
import type { Policy } from '../policy/policy.ts';
import type { ToolSpec } from './tool-spec.ts';

/** What the run-tool stage uses: each tool's simulated latency. */
export interface RunToolDeps {
  readonly policy: Pick<Policy, 'tools'>;
}

/** A tool's answer serialised: its JSON text, and its UTF-8 bytes when it was serialised once for many calls. */
export interface SerialisedAnswer {
  readonly text: string;
  /** The text's UTF-8 bytes, shared by every call given the same answer: written as they are, never changed. */
  readonly bytes?: Uint8Array;
}

/**
 * The run-tool stage: the tool's simulated backend latency (real time, when configured), then its provider;
 * the result serialised once. A synchronous provider (the fixtures) without latency answers without a tick.
 */
export function runTool<T>(deps: RunToolDeps, spec: ToolSpec<T>, body: T): MaybePromise<SerialisedAnswer> {
  const latency = deps.policy.tools[spec.tool]?.latency_ms ?? 0;
  if (latency > 0) return sleep(latency).then(() => serialise(spec.run(body)));
  return serialise(spec.run(body));
}

const serialise = (result: unknown): MaybePromise<SerialisedAnswer> =>
  result instanceof Promise ? result.then(serialiseAnswer) : serialiseAnswer(result);

// Frozen answers, serialised once each: the fixture providers give the same frozen object for the same
// request (providers/answer-memo.ts). Serialising and encoding a search answer again on every call was the
// largest allocation of the request path (2.7 KB of 12 KB a request; about 10 µs of CPU a request in the
// server at 2,500 req/s, measured side by side, though JSON.stringify alone takes 2.8 µs in a loop).
const serialisedOnce = new WeakMap<object, SerialisedAnswer>();

/**
 * A provider's answer as JSON. An answer the provider froze is one it promises never to change: the first
 * call serialises and encodes it, the next ones given the same object reuse both. Any other answer is
 * serialised each time (a provider may build its answers in place).
 */
export function serialiseAnswer(result: unknown): SerialisedAnswer {
  if (typeof result !== 'object' || result === null || !Object.isFrozen(result))
    return { text: JSON.stringify(result) };
  let known = serialisedOnce.get(result);
  if (known === undefined) {
    const text = JSON.stringify(result);
    // Bytes of their own (not a slice of Buffer's shared pool, which they would keep whole).
    const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
    bytes.write(text);
    known = { text, bytes };
    serialisedOnce.set(result, known);
  }
  return known;
}
