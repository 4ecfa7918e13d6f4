import { z } from 'zod';
import { PROTECTED_ENDPOINTS } from '../../vocabulary/endpoints.ts';

/*
 * The replay section of a scenario: what a recorded gateway answered each agent, in order, for the
 * reference gateway to answer the same (replay-tracks.ts serves it; `agent-gateway scenario from-har` writes
 * it from a HAR file or the journal's NDJSON export).
 */

/** A header value an HTTP/1.1 answer can carry (node:http refuses the rest, which would fail the answer). */
export const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** One recorded answer: the n-th of its agent to its endpoint answers that agent's n-th request there. */
const recordedAnswerSchema = z.strictObject({
  operation: z
    .enum(PROTECTED_ENDPOINTS)
    .describe('the endpoint it answered: whoami, web.search or web.fetch'),
  at_ms: z
    .number()
    .int()
    .min(0)
    .describe("when it was asked, in ms after the recording's start (the gateway clock of the recording)"),
  status: z
    .number()
    .int()
    // An interim answer (1xx) is no final answer: the agent would wait for one that never comes.
    .refine((s) => s === 0 || (s >= 200 && s <= 599), 'must be 0 (connection dropped) or 200 to 599')
    .describe('the status answered; 0: the connection was dropped'),
  headers: z
    .record(
      z.string().regex(/^[!#$%&'*+.^_`|~0-9a-z-]+$/, 'must be a lower-case header name'),
      z
        .string()
        .regex(
          HEADER_VALUE,
          'must hold no line break and no character beyond Latin-1 (HTTP/1.1 header value)',
        ),
    )
    .default({})
    .describe('its end-to-end headers (Retry-After, RateLimit fields, content-type...), redacted'),
  json: z.unknown().optional().describe('its body, when it was JSON'),
  body: z.string().optional().describe('its body as text, when it was not JSON'),
});

export type RecordedAnswer = z.output<typeof recordedAnswerSchema>;

export const replaySchema = z
  .strictObject({
    /** Where it was converted from, for the reader. */
    source: z.string().optional(),
    /** The recording's start, on the recorded gateway's clock: `at_ms` counts from it. */
    recorded_at: z.iso.datetime({ offset: true }),
    /**
     * Which recorded agent answers which calling agent (`calling: recorded`). Without a map: one recorded
     * agent answers every agent; several answer the agents of the same id.
     */
    agent_map: z.record(z.string().min(1), z.string().min(1)).default({}),
    agents: z
      .record(z.string().min(1), z.array(recordedAnswerSchema).min(1))
      .refine((agents) => Object.keys(agents).length > 0, 'must name at least one recorded agent'),
  })
  .superRefine((replay, ctx) => {
    for (const [calling, recorded] of Object.entries(replay.agent_map))
      if (!(recorded in replay.agents))
        ctx.addIssue({
          code: 'custom',
          path: ['agent_map', calling],
          message: `no recorded agent "${recorded}" (recorded: ${Object.keys(replay.agents).join(', ')})`,
        });
  });

export type Replay = z.output<typeof replaySchema>;
export type ReplayInput = z.input<typeof replaySchema>;
