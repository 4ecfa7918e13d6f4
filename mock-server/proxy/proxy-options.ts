import { z } from 'zod';
import { GatewayError } from '../errors.ts';

/**
 * The proxy's own options, declared once: its deadlines on the target and the fields its journal keeps
 * verbatim. `agent-gateway proxy` takes them as flags (`--connect-timeout-ms`, ..., `--keep-field`, from
 * cli/option-tables.ts, generated from this schema), `createProxy` as fields.
 *
 * A deadline that passes before the target answered gets the agent the proxy's JSON 504 `upstream_timeout`;
 * once the answer has begun (status and headers passed on), an idle target's answer is cut off (the
 * connection closed, as the target's own failure would). Either way the exchange is journaled with what
 * happened (`fault: proxy:connect_timeout`, `proxy:first_byte_timeout`, `proxy:idle_timeout`) and the
 * findings list it (`target.answers-in-time`).
 */
export const proxyOptionsSchema = z.strictObject({
  connectTimeoutMs: z
    .number()
    .int()
    .min(1)
    .max(600_000)
    .default(5_000)
    .describe('longest wait for a connection to the target before the agent gets a JSON 504'),
  firstByteTimeoutMs: z
    .number()
    .int()
    .min(1)
    .max(3_600_000)
    .default(30_000)
    .describe(
      "longest wait for the start of the target's answer (its status line) once the request was sent, before the agent gets a JSON 504",
    ),
  idleTimeoutMs: z
    .number()
    .int()
    .min(1)
    .max(3_600_000)
    .default(30_000)
    .describe(
      "longest silence of the target while it sends an answer's body (or reads the request's) before the proxy cuts the exchange off",
    ),
  keepField: z
    .array(z.string().min(1).max(200))
    .max(100)
    .default([])
    .describe(
      'a header, JSON field, query or form parameter, or multipart part the journal keeps although its name speaks of a credential (repeatable, any spelling; the secret scan still applies)',
    ),
});

export type ProxyDeadlines = Omit<z.output<typeof proxyOptionsSchema>, 'keepField'>;
export type ProxyOwnOptions = z.input<typeof proxyOptionsSchema>;

/**
 * The proxy's own options validated, defaults applied: its deadlines and the fields kept as sent. A bad one
 * is the caller's mistake: 400 `invalid_request` naming each field.
 *
 * @example
 * readProxyOptions({ connectTimeoutMs: 2000 }); // { connectTimeoutMs: 2000, firstByteTimeoutMs: 30000, ..., keepField: [] }
 */
export function readProxyOptions(options: ProxyOwnOptions): z.output<typeof proxyOptionsSchema> {
  const parsed = proxyOptionsSchema.safeParse({
    connectTimeoutMs: options.connectTimeoutMs,
    firstByteTimeoutMs: options.firstByteTimeoutMs,
    idleTimeoutMs: options.idleTimeoutMs,
    keepField: options.keepField,
  });
  if (parsed.success) return parsed.data;
  throw new GatewayError('invalid_request', {
    message: `Invalid proxy options: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
  });
}
