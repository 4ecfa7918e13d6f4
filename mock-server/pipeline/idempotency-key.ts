import type { Answer, CallContext } from '../http/context.ts';
import { NO_STORE, respondJsonText } from '../http/respond.ts';
import { parseIdempotencyKey, requestFingerprint } from '../idempotency.ts';
import type { Identity } from '../identity/identity-provider.ts';
import { andThen, type MaybePromise } from '../maybe-promise.ts';
import type { StatePort } from '../store/state-port.ts';
import type { ToolSpec } from './tool-spec.ts';

/**
 * The idempotency stage's decision: answer from the store, or go on and settle the key with the outcome:
 * the tool's 200 body (stored, with `Cache-Control: no-store`), or undefined when the call did not succeed.
 */
export type KeyOutcome =
  | { replay: Answer; settle?: undefined }
  | { replay?: undefined; settle(answered: string | undefined): void };

const NO_KEY: KeyOutcome = { settle() {} };

/** What the idempotency stage uses: the state port's keys (in memory or shared: a retry may land elsewhere). */
export interface IdempotencyKeyDeps {
  readonly state: Pick<StatePort, 'idempotency' | 'clock'>;
}

/**
 * The idempotency stage (reference profile, `Idempotency-Key`). `headers` are the admission's (RateLimit):
 * a replay carries the current ones. The same key with the same request replays
 * the stored answer; with another request it is 422, while the first is still running 409 (thrown without
 * holding the key, so the first request's entry survives the conflict). Without the header it does nothing.
 */
export function idempotencyKey(
  deps: IdempotencyKeyDeps,
  ctx: CallContext,
  identity: Identity,
  spec: ToolSpec,
  bytes: Uint8Array,
  headers: Readonly<Record<string, string>>,
): MaybePromise<KeyOutcome> {
  const header = ctx.request.header('idempotency-key');
  if (header === undefined) return NO_KEY;
  const { clock, idempotency } = deps.state;
  const key = parseIdempotencyKey(header);
  const request = requestFingerprint('POST', spec.path, bytes);
  return andThen(idempotency.begin(identity.agentId, key, request, clock.now()), (begun): KeyOutcome => {
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
      settle(answered) {
        const stored =
          answered === undefined ? undefined : { status: 200, body: answered, headers: NO_STORE };
        idempotency.finish(identity.agentId, key, request, clock.now(), stored, begun.storeKey);
        if (stored) ctx.note.idempotency = 'stored';
      },
    };
  });
}
