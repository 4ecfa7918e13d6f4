import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterEach, describe, expect, it } from 'vitest';
import { clientReportJsonSchema, REPORT_SCHEMA_FILE } from '../dev/gen-report-schema.ts';
import { type RunningServer, serve } from '../mock-server/adapters/node-server.ts';
import { type ClientReport, formatClientReport } from '../mock-server/client-report/report.ts';
import { CLIENT_REPORT_SCHEMA_VERSION } from '../mock-server/client-report/report-version.ts';
import { timelineOf } from '../mock-server/client-report/timeline.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { send } from './support/agents.ts';

/*
 * The report's JSON is a contract for harnesses in other languages (docs/any-language.md): its JSON Schema
 * (mock-server/client-report/report.schema.json) is generated from the answer's zod schema, and real
 * reports, fetched over HTTP from a served gateway as a harness fetches them, are held to the committed file.
 */

const ADMIN_KEY = 'report-schema-key';
const running: RunningServer[] = [];
afterEach(() => Promise.all(running.splice(0).map((s) => s.close())));

const committed = () => JSON.parse(readFileSync(REPORT_SCHEMA_FILE, 'utf8')) as Record<string, unknown>;

function validatorOf(schema: Record<string, unknown>) {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats.default(ajv);
  return ajv.compile(schema);
}

async function report(url: string, query: string) {
  const response = await fetch(`${url}/__admin/report?${query}`, { headers: { 'x-admin-key': ADMIN_KEY } });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown> & { violations: { rule: string }[] };
}

describe('the client report JSON Schema', () => {
  it('is the file `npm run gen:report-schema` writes (regenerate it after changing clientReportSchema)', () => {
    expect(committed()).toEqual(clientReportJsonSchema());
    expect(String(committed().$id)).toContain(`v${CLIENT_REPORT_SCHEMA_VERSION}`);
  });

  it('accepts real reports, with and without violations, inferences and a since window', async () => {
    const gateway = createGateway({
      adminKey: ADMIN_KEY,
      config: {
        rate_limits: {
          rules: [{ name: 'slow', scope: 'agent', algorithm: 'token_bucket', limit: 2, window_seconds: 60 }],
        },
      },
    });
    const server = await serve(gateway, { port: 0 });
    running.push(server);
    const validate = validatorOf(committed());
    const token = gateway.mintToken('agent-verified');
    await send(server.url, token, 'GET', '/v1/whoami');
    const clean = await report(server.url, 'agent=agent-verified');
    // Refused, then retried at once, again and again: honor-retry-after (and more) with requests listed.
    for (let i = 0; i < 6; i++) await send(server.url, token, 'GET', '/v1/whoami');
    const broken = await report(server.url, 'agent=agent-verified');
    const windowed = await report(server.url, 'agent=agent-verified&since=1&retry_cap=2');
    const nothing = await report(server.url, 'agent=agent-early');
    for (const body of [clean, broken, windowed, nothing]) {
      const valid = validate(body);
      expect(validate.errors ?? [], JSON.stringify(body).slice(0, 400)).toEqual([]);
      expect(valid).toBe(true);
      expect(body.schema_version).toBe(CLIENT_REPORT_SCHEMA_VERSION);
    }
    expect(clean.violations).toEqual([]);
    expect(broken.violations.map((v) => v.rule)).toContain('honor-retry-after');
    expect(windowed.requests).toBe(6);
    expect(windowed.options).toMatchObject({ since: 1, retryCap: 2 });
    expect(nothing.requests).toBe(0);
    // The text and the timeline a harness in another language shows are the ones the JS code renders.
    const { text, ...rest } = windowed as unknown as ClientReport;
    expect(text).toBe(formatClientReport(rest as ClientReport));
    const graded = gateway.journal.list({ agent: 'agent-verified', since: 1 });
    expect(graded).toHaveLength(6);
    expect(windowed.timeline).toBe(timelineOf(graded, 'agent-verified'));
    expect(windowed.timeline).toMatch(
      /^What agent-verified did \(6 requests\):\n {2}\+ +0\.000 s {2}#2 GET \/v1\/whoami/,
    );
  });

  it('rejects what breaks the contract (the schema can fail)', () => {
    const validate = validatorOf(committed());
    expect(validate({ agent: 'a', requests: 0 })).toBe(false);
    const report = {
      schema_version: CLIENT_REPORT_SCHEMA_VERSION + 1,
      agent: 'a',
      requests: 0,
      options: { retryCap: 6, graceMs: 100, maxConcurrencyAfter429: 2, quietMs: 1000 },
      rules: [],
      violations: [],
    };
    expect(validate(report)).toBe(false);
    expect(validate({ ...report, schema_version: CLIENT_REPORT_SCHEMA_VERSION })).toBe(true);
  });
});
