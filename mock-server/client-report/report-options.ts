import { z } from 'zod';

/**
 * Thresholds of the client rules, and `since` (the window a per-test report grades), declared once: the report's defaults, the admin API's
 * `GET /__admin/report` query parameters (and their OpenAPI description) and the flags of
 * `agent-gateway report` are all derived from this schema.
 */
export const reportOptionsSchema = z.strictObject({
  retryCap: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(6)
    .describe(
      'most consecutive failed attempts of one request (429, 5xx, dropped) before it is an uncapped retry loop',
    ),
  graceMs: z
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(100)
    .describe('requests this soon after a 429 was answered were already in flight, not a reaction to it'),
  maxConcurrencyAfter429: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(2)
    .describe('most requests an agent may have in flight while a 429 is in force'),
  quietMs: z
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .default(1000)
    .describe('how long a 429 without Retry-After asks for restraint (the parallel-storm rule)'),
  since: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      "grade only the requests journaled after this seq (a test's mark: journalMark(gateway) in JS, the journal's next_since over HTTP, taken when the test began); absent: the whole journal (the JS matchers: the current test's requests)",
    ),
});

/** Thresholds of the client rules (and the window graded); every one can be changed per report. */
export type ClientReportOptions = z.output<typeof reportOptionsSchema>;

/** Every threshold at its default. */
export const DEFAULT_REPORT_OPTIONS: ClientReportOptions = reportOptionsSchema.parse({});
