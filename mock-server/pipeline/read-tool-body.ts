import type { BodyTool, CallContext } from '../http/context.ts';
import { parseJsonBodyAsSent, readBody } from '../http/read-body.ts';
import type { Identity } from '../identity/identity-provider.ts';
import { andThen, type MaybePromise } from '../maybe-promise.ts';
import { noteOutgoingText, noteRefusedCall } from './outgoing-text.ts';
import type { ToolSpec } from './tool-spec.ts';

/** A tool call's body: as sent (for fingerprints) and as validated. */
export interface ToolBody<T> {
  bytes: Uint8Array;
  value: T;
}

/**
 * The read-body stage of a tool call: Content-Type (415), size (413), JSON and the tool's schema (400).
 * The journal learns the request's fingerprint (the same bytes) and its key (the same meaning: the client
 * report recognises retries by it, whatever a retry changed in case, spacing, punctuation or ignored
 * fields), and the query or URL with secrets redacted, also when the body is refused.
 */
export function readToolBody<T>(
  ctx: CallContext,
  identity: Identity,
  spec: ToolSpec<T>,
): MaybePromise<ToolBody<T>> {
  let asSent: Uint8Array | undefined;
  // Refused before it parsed (415: not JSON, a coding not decoded; 400: not what its coding says): what it
  // carries is read all the same, by the one reader of sent bodies.
  const refused = (error: unknown): Promise<never> =>
    noteRefusedCall(ctx, identity, spec, asSent && { bytes: asSent, decoded: false }).then(() => {
      throw error;
    });
  let read: MaybePromise<Uint8Array>;
  try {
    read = readBody(ctx.request, ctx.runtime.config.server.max_body_bytes, (bytes) => {
      asSent = bytes;
    });
  } catch (error) {
    return refused(error);
  }
  if (read instanceof Promise) read = read.catch(refused);
  return andThen(read, (bytes) => toolBody(ctx, identity, spec, bytes));
}

/** The read bytes as the tool's body, noted for the journal; a refused body is noted, then thrown. */
function toolBody<T>(
  ctx: CallContext,
  identity: Identity,
  spec: ToolSpec<T>,
  bytes: Uint8Array,
): ToolBody<T> | Promise<never> {
  ctx.requestBody = bytes;
  let value: T;
  try {
    ({ value } = parseJsonBodyAsSent(bytes, spec.schema));
  } catch (error) {
    return noteRefusedCall(ctx, identity, spec, { bytes, decoded: true }).then(() => {
      throw error;
    });
  }
  // The query or URL: the memory of split secrets moves on now (texts in order); read with the entry.
  if (spec.field !== undefined)
    noteOutgoingText(ctx, identity, spec.field, (value as Record<string, string>)[spec.field] as string);
  // The body's fingerprint, meaning and other secrets: worked out when the entry is read (entry-readings.ts).
  ctx.bodyTool = spec as BodyTool;
  ctx.sentAt = Date.now();
  ctx.bodyScan = ctx.runtime.scanSecrets.frozen?.();
  return { bytes, value };
}
