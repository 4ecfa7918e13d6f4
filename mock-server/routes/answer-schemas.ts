import { z } from 'zod';
import { reportOptionsSchema } from '../client-report/report-options.ts';
import { CLIENT_REPORT_SCHEMA_VERSION } from '../client-report/report-version.ts';
import { configSchema } from '../config/schema.ts';
import { ERROR_CODES } from '../errors.ts';
import { faultSpecSchema } from '../scenarios/faults.ts';

// The answers' shapes, for the OpenAPI document: one file on purpose, every answer of the API in one place,
// as the document lists them. Request bodies are described by the schemas that validate
// them (tools/, routes/), the tools' answers by their definitions (tools/). Answers are built in code, so these
// are checked against real answers instead
// (`openapi.test.ts` sends every documented request and parses each answer with its schema, strictly).

const isoTime = z.iso.datetime();

/** Every error body: `{ code, message, ...details, request_id }`. */
export const errorSchema = z
  .looseObject({
    code: z.enum(ERROR_CODES).describe('A stable snake_case code; the HTTP status goes with it.'),
    message: z.string().describe('What went wrong and what to do, for a person.'),
    request_id: z.string().describe('The X-Request-Id of the request.'),
  })
  .describe('An error (spec section 7). Details depend on the code, e.g. `field` for invalid_request.');

export const healthSchema = z.strictObject({
  status: z.literal('ok'),
  version: z.literal('v1'),
  time: isoTime,
});

export const whoamiSchema = z.strictObject({
  agent: z.strictObject({ id: z.string(), name: z.string() }),
  tier: z.string(),
  tools: z
    .array(z.string())
    .describe("The tools this agent may call now (the built-in ones and the config's)."),
  token: z.strictObject({
    issued_at: isoTime,
    expires_at: isoTime,
    expires_in_seconds: z.number().int().min(0),
  }),
});

export const tokenResponseSchema = z.strictObject({
  token: z.string(),
  token_type: z.literal('agent-identity'),
  header: z.literal('X-Agent-Identity'),
  agent_id: z.string(),
  expires_at: isoTime,
  expires_in: z.number().int(),
});

export const agentViewSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  api_key: z.string(),
  tier: z.string(),
  allowlist: z.array(z.string()),
  disabled: z.boolean(),
  token_generation: z
    .number()
    .int()
    .describe('Raised by revoke-tokens: tokens of an older generation are refused.'),
});

export const mintedTokenSchema = z.strictObject({
  token: z.string(),
  agent_id: z.string(),
  expires_at: isoTime,
});

const toolsConfig = configSchema.shape.tools;
export const toolsSchema = z.strictObject({ tools: toolsConfig });
export const toolPatchedSchema = z.looseObject({
  tool: z.string(),
  tiers: z.array(z.string()),
  enabled: z.boolean(),
  latency_ms: z.number().int(),
});
/** The rate limits in force: the config's own `rate_limits`. */
export const limitsSchema = configSchema.shape.rate_limits.unwrap();

export const clockSchema = z.strictObject({
  now: z.number().int().describe('The gateway clock, ms since the epoch.'),
  time: isoTime,
  frozen: z.boolean(),
  epoch: z
    .number()
    .int()
    .describe('How many times the clock was moved back: each move into its past starts a new epoch.'),
});

export const faultSchema = z.strictObject({
  ...faultSpecSchema.shape,
  id: z.string(),
  seen: z.number().int().describe('Matching requests seen so far.'),
  fired: z.number().int().describe('Times it struck.'),
});

/** One journal entry. Open: fields may be added (older readers ignore them). */
export const journalEntrySchema = z.looseObject({
  seq: z.number().int(),
  request_id: z.string(),
  at: z.number().describe('Start on the gateway clock (ms since the epoch).'),
  time: isoTime,
  epoch: z
    .number()
    .int()
    .optional()
    .describe(
      'The gateway clock epoch at arrival: how many times the clock had been moved back (absent: 0).',
    ),
  duration_ms: z.number(),
  real_ms: z.number(),
  written_ms: z.number().optional(),
  connection: z.number().int().optional(),
  connection_opened_ms: z.number().optional(),
  connection_seq: z
    .number()
    .int()
    .optional()
    .describe('Which request this was on its connection (1 = the first); Node adapter only.'),
  answers_seen: z
    .number()
    .int()
    .optional()
    .describe(
      'In process (msw, fetch adapter): answers the adapter had handed back when this request was issued.',
    ),
  answer_order: z
    .number()
    .int()
    .optional()
    .describe(
      "In process: this request's answer's place in the order answers were handed back (1 = the first).",
    ),
  delivery_instance: z
    .number()
    .int()
    .optional()
    .describe('Shared store: the instance whose in-process counts these are.'),
  read_turn: z
    .number()
    .int()
    .optional()
    .describe("Node adapter: the turn of the gateway's event loop in which this request was read."),
  opened_turn: z
    .number()
    .int()
    .optional()
    .describe("Node adapter: the event-loop turn in which this request's connection was accepted."),
  written_turn: z
    .number()
    .int()
    .optional()
    .describe(
      "Node adapter: the event-loop turn its answer was written in, when known to be in the loop's I/O phase (the gateway: the turn it was read in; the proxy: the turn it read the target's answer in).",
    ),
  stall_runs: z
    .array(z.tuple([z.number(), z.number(), z.number().min(0), z.number().min(0)]))
    .optional()
    .describe(
      "Node adapter and in process (msw, fetch): the gateway's event loop's runs of stalls before it read this request, [from, to (real clock, ms), time lost, longest stall (ms)], oldest first; a run is the stalls with no probe on time between them. Between an answer and a later request, they bound how much of the time between them was the machine's.",
    ),
  method: z.string(),
  path: z.string(),
  operation: z.string(),
  status: z.number().int().describe('0 when the connection was dropped (a fault).'),
  code: z.string().optional(),
  agent: z.string().optional(),
  token: z.string().optional().describe('A fingerprint of the identity token, never the token.'),
  in_flight: z.number().int().optional(),
  request_fingerprint: z.string().optional(),
  request_key: z
    .string()
    .optional()
    .describe(
      "A fingerprint of what the request means (case, spacing and punctuation of the query, the URL's spelling and ignored fields left out).",
    ),
  retry_after: z.string().optional(),
  retry_after_ms: z.number().optional(),
  limit: z.strictObject({ rule: z.string(), scope: z.string(), key: z.string() }).optional(),
  quota: z
    .array(
      z.strictObject({
        rule: z.string(),
        key: z.string(),
        limit: z.number().int(),
        remaining: z.number().int(),
      }),
    )
    .optional()
    .describe('Each rate-limit rule that counted the request, and what it had left after it.'),
  fault: z.string().optional(),
  replay: z
    .string()
    .optional()
    .describe("Replay scenarios: the recorded answer that answered it, '<recorded agent>#<n>'."),
  idempotency: z.enum(['stored', 'replayed']).optional(),
  query: z.string().optional(),
  url: z.string().optional(),
  secrets: z.array(z.string()).optional(),
  secrets_split: z
    .array(z.string())
    .optional()
    .describe("Kinds of secrets found only by joining this query or URL with the agent's previous one."),
  secrets_in: z
    .array(z.string())
    .optional()
    .describe('Where the secrets were: query, url, body.<field>, call URL, header <name>.'),
  exchange: z
    .strictObject({
      request_headers: z.array(z.tuple([z.string(), z.string()])),
      query: z
        .string()
        .optional()
        .describe("The request's query string (without `?`), credentials redacted."),
      request_body: z.string().optional(),
      request_body_bytes: z.number().int(),
      response_headers: z.array(z.tuple([z.string(), z.string()])),
      response_body: z.string().optional(),
      response_body_bytes: z.number().int(),
      http_version: z.string().optional(),
    })
    .optional()
    .describe(
      'Headers, the query and the first journal.body_bytes of each body, the identity header, credentials (by name, wherever they sit) and secrets redacted; a body is redacted before it is cut.',
    ),
  findings: z
    .array(z.strictObject({ rule: z.string(), detail: z.string() }))
    .optional()
    .describe("Spec rules this answer broke (proxy mode: the target's answers)."),
  target_request_id: z.string().optional().describe("Proxy mode: the target's X-Request-Id."),
  attributed_by: z
    .enum(['token', 'api_key', 'token_claim', 'connection'])
    .optional()
    .describe('How an unnamed request was tied.'),
  body_unread: z.string().optional().describe("Why the request's body could not be read."),
  own_key_unknown: z
    .literal(true)
    .optional()
    .describe("Proxy mode: the agent's own API key was unknown when this request was scanned."),
});

const nameValue = z.strictObject({ name: z.string(), value: z.string() });
/** HAR 1.2 (the fields this gateway writes; `_`-prefixed ones are its own, as HAR allows). */
export const harSchema = z.strictObject({
  log: z.looseObject({
    version: z.literal('1.2'),
    creator: z.strictObject({ name: z.string(), version: z.string() }),
    entries: z.array(
      z.looseObject({
        startedDateTime: isoTime,
        time: z.number(),
        request: z.looseObject({
          method: z.string(),
          url: z.string(),
          httpVersion: z.string(),
          headers: z.array(nameValue),
        }),
        response: z.looseObject({
          status: z.number().int(),
          statusText: z.string(),
          headers: z.array(nameValue),
          content: z.looseObject({ size: z.number(), mimeType: z.string(), text: z.string().optional() }),
        }),
        timings: z.strictObject({ send: z.number(), wait: z.number(), receive: z.number() }),
      }),
    ),
  }),
});

export const findingsSchema = z.strictObject({
  judged: z.number().int().describe("Answers of the spec's endpoints judged (proxy mode)."),
  dropped: z.number().int(),
  rules: z.array(
    z.strictObject({
      id: z.string(),
      specRef: z.string(),
      level: z.enum(['MUST', 'SHOULD']),
      title: z.string(),
      count: z.number().int(),
      exchanges: z.array(
        z.looseObject({
          seq: z.number().int(),
          request_id: z.string(),
          method: z.string(),
          path: z.string(),
          status: z.number().int(),
          detail: z.string(),
        }),
      ),
    }),
  ),
});

export const journalSchema = z.strictObject({
  capacity: z.number().int(),
  dropped: z.number().int().describe('Older entries no longer held.'),
  entries: z.array(journalEntrySchema),
  more: z.boolean().describe('Entries after next_since may match: ask again with since=next_since.'),
  next_since: z.number().int().describe('The seq to page on from (the last entry looked at).'),
});

const scenarioView = z.strictObject({ name: z.string(), description: z.string(), source: z.string() });
export const scenariosSchema = z.strictObject({
  scenarios: z.array(z.strictObject({ name: z.string(), description: z.string() })),
});
export const scenarioSchema = z.strictObject({ scenario: scenarioView.nullable() });
export const scenarioLoadedSchema = z.strictObject({ scenario: scenarioView, clock: clockSchema });
export const resetSchema = z.strictObject({ reset: z.literal(true), clock: clockSchema });

const requestView = z.looseObject({
  seq: z.number().int(),
  time: isoTime,
  method: z.string(),
  path: z.string(),
  operation: z.string(),
  status: z.number().int(),
  connection: z.number().int().optional().describe('The connection it came on (Node adapter only).'),
});
/** The client behaviour report. Open: fields may be added. */
export const clientReportSchema = z.looseObject({
  schema_version: z
    .literal(CLIENT_REPORT_SCHEMA_VERSION)
    .describe('The version of this shape: raised when a field is removed or changes meaning.'),
  agent: z.string(),
  requests: z.number().int(),
  journal_dropped: z.number().int().optional(),
  without_connection: z
    .number()
    .int()
    .optional()
    .describe(
      'Requests judged without connection facts (node:http) or delivery facts (in process: msw, fetch): told apart by time only.',
    ),
  unattributed: z
    .strictObject({
      requests: z.number().int(),
      reasons: z.array(z.strictObject({ reason: z.string(), requests: z.number().int() })),
    })
    .optional()
    .describe('Requests of the journal no token, API key or connection ties to an agent, and why.'),
  from: isoTime.optional().describe('The first graded request (of the last clock epoch, with epochs).'),
  to: isoTime.optional().describe('The last graded request (of the last clock epoch, with epochs).'),
  epochs: z
    .array(
      z.looseObject({
        epoch: z.number().int(),
        first_seq: z.number().int(),
        requests: z.number().int(),
        from: isoTime,
        to: isoTime,
      }),
    )
    .optional()
    .describe(
      "Present when the gateway's clock was moved back among the graded requests: each epoch is judged apart.",
    ),
  // The thresholds the report was graded with (report-options.ts), every one filled in; `since` when given.
  options: reportOptionsSchema.required().partial({ since: true }),
  rules: z.array(
    z.looseObject({
      id: z.string(),
      title: z.string(),
      spec_ref: z.string(),
      violations: z.number().int(),
      unobserved: z
        .string()
        .optional()
        .describe('Why the journal could not show whether the rule was kept: not observed, so not a pass.'),
    }),
  ),
  violations: z.array(
    z.looseObject({
      rule: z.string(),
      spec_ref: z.string(),
      message: z.string(),
      count: z.number().int().describe('How many times this one behaviour happened.'),
      inference: z.string().optional().describe('The inference the violation rests on, if any.'),
      cannot_tell_apart: z
        .string()
        .optional()
        .describe('Where the guide says what the rule cannot tell apart.'),
      requests: z.array(requestView),
    }),
  ),
  timeline: z
    .string()
    .optional()
    .describe(
      "What the agent did: its graded requests (the most recent 40), one a line, with the connection each came on or the answer it was issued after (always sent since this field was added; absent from older gateways' reports).",
    ),
  text: z
    .string()
    .optional()
    .describe(
      'The report as text, as `agent-gateway report` prints it and the JS matchers show it (the admin API sends it).',
    ),
});

export const endpointListSchema = z.strictObject({ endpoints: z.array(z.string()) });
export const agentsSchema = z.strictObject({ agents: z.array(agentViewSchema) });
export const faultsSchema = z.strictObject({ faults: z.array(faultSchema) });
export const emptyJournalSchema = z.strictObject({ entries: z.tuple([]) });
