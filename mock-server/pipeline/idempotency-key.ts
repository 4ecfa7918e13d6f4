import {
  type IdempotencyOutcome,
  parseIdempotencyKey,
  requestFingerprint,
  type StoredResponse,
} from '../idempotency.ts';
import type { Identity } from '../identity/identity-provider.ts';
import type { Answer, CallContext, ToolSpec } from './context.ts';
import { respondJsonText } from './respond.ts';

/** The idempotency stage's decision: answer from the store, or go on and settle the key with the outcome. */
export type KeyOutcome =
  | { replay: Answer; settle?: undefined }
  | { replay?: undefined; settle(stored: StoredResponse | undefined): void };

const NO_KEY: KeyOutcome = { settle() {} };

/**
 * The idempotency stage (reference profile, `Idempotency-Key`). `headers` are the admission's (RateLimit):
 * a replay carries the current ones.: the same key with the same request replays
 * the stored answer; with another request it is 422, while the first is still running 409 (thrown without
 * holding the key, so the first request's entry survives the conflict). Without the header it does nothing.
 */
export function idempotencyKey(
  ctx: CallContext,
  identity: Identity,
  spec: ToolSpec,
  bytes: Uint8Array,
  headers: Readonly<Record<string, string>>,
): KeyOutcome | Promise<KeyOutcome> {
  const header = ctx.request.header('idempotency-key');
  if (header === undefined) return NO_KEY;
  const { clock, shared } = ctx.runtime;
  // Keys live in the shared store when there is one (a retry may land on another instance).
  const idempotency = shared?.idempotency ?? ctx.runtime.idempotency;
  const key = parseIdempotencyKey(header);
  const request = requestFingerprint('POST', spec.path, bytes);
  const outcome = idempotency.begin(identity.agentId, key, request, clock.now());
  const decide = (begun: IdempotencyOutcome): KeyOutcome => {
    if (begun.kind === 'replay') {
      ctx.note.idempotency = 'replayed';
      const replay = begun.response;
      return {
        replay: respondJsonText(ctx, replay.body, replay.status, replay.headers, {
          ...headers,
          'idempotent-replayed': 'true',
        }),
      };
    }
    return {
      settle(stored) {
        idempotency.finish(identity.agentId, key, request, clock.now(), stored, begun.storeKey);
        if (stored) ctx.note.idempotency = 'stored';
      },
    };
  };
  return outcome instanceof Promise ? outcome.then(decide) : decide(outcome);
}
