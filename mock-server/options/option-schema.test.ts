import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { reportOptionsSchema } from '../client-report/report-options.ts';
import { createOpenApiDocument } from '../openapi/document.ts';
import { faultSpecSchema } from '../scenarios/faults.ts';
import { fromQuery, kebabCase, optionTableOf, queryShapeOf, snakeCase } from './option-schema.ts';

describe('option schemas and what derives from them', () => {
  it('names a field for the command line and the query string', () => {
    expect(['retryCap', 'maxConcurrencyAfter429', 'delay_ms', 'strict'].map(kebabCase)).toEqual([
      'retry-cap',
      'max-concurrency-after-429',
      'delay-ms',
      'strict',
    ]);
    expect(['retryCap', 'maxConcurrencyAfter429', 'delay_ms'].map(snakeCase)).toEqual([
      'retry_cap',
      'max_concurrency_after_429',
      'delay_ms',
    ]);
  });

  it('reads description, bounds, choices and default off the schema, nested fields flattened', () => {
    const rows = optionTableOf(faultSpecSchema);
    expect(rows.find((r) => r.key === 'delay_ms')).toMatchObject({
      flag: 'delay-ms',
      type: 'integer',
      min: 0,
      max: 120_000,
      default: 1000,
      required: false,
    });
    expect(rows.find((r) => r.key === 'status')).toMatchObject({
      choices: [500, 502, 503, 504],
      choicesMessage: 'must be 500, 502, 503 or 504',
      default: 503,
    });
    expect(rows.find((r) => r.key === 'operation')?.path).toEqual(['match', 'operation']);
    expect(rows.find((r) => r.key === 'kind')).toMatchObject({
      required: true,
      choices: ['status', 'delay', 'drop'],
    });
    expect(rows.every((r) => r.description.length > 0)).toBe(true);
  });

  it('parses a query string with the same bounds and the words z.coerce gives', () => {
    const query = z.strictObject(queryShapeOf(reportOptionsSchema));
    expect(query.parse({ retry_cap: '10', quiet_ms: '0' })).toEqual({
      retry_cap: 10,
      grace_ms: 100,
      max_concurrency_after_429: 2,
      quiet_ms: 0,
    });
    const old = z.coerce.number().int().min(1).max(1000);
    for (const bad of ['zero', '0', '1.5', '1001', ''])
      expect(query.safeParse({ retry_cap: bad }).error?.issues[0]?.message, bad).toBe(
        old.safeParse(bad).error?.issues[0]?.message,
      );
    expect(query.safeParse({ retryCap: '3' }).success).toBe(false);
    expect(fromQuery(reportOptionsSchema, { agent: 'a', retry_cap: 3, grace_ms: 0 })).toEqual({
      retryCap: 3,
      graceMs: 0,
    });
  });

  it("documents GET /__admin/report's parameters as the schema declares them", () => {
    const document = createOpenApiDocument() as {
      paths: Record<
        string,
        { get: { parameters: { name: string; description?: string; schema: object }[] } }
      >;
    };
    const parameters = document.paths['/__admin/report']?.get.parameters ?? [];
    for (const row of optionTableOf(reportOptionsSchema)) {
      const parameter = parameters.find((p) => p.name === row.query);
      expect(parameter?.description, row.query).toBe(row.description);
      expect(parameter?.schema).toMatchObject({
        type: 'integer',
        minimum: row.min,
        maximum: row.max,
        ...(row.default === undefined ? {} : { default: row.default }),
      });
    }
  });
});
