import type { z } from 'zod';
import { reportOptionsSchema } from '../../client-report/report-options.ts';
import { GatewayError } from '../../errors.ts';
import { respondJsonText, respondText } from '../../http/respond.ts';
import { findingsOf } from '../../journal/answer-findings.ts';
import { harTextSlices } from '../../journal/har.ts';
import { journalPageJson } from '../../journal/journal.ts';
import { fromQuery } from '../../options/option-schema.ts';
import {
  exportQuery,
  findingsQuery,
  journalExportQuery,
  journalQuery,
  reportQuery,
} from '../admin-schemas.ts';
import type { AdminKit } from './admin-kit.ts';

/** Parses a query string with a schema; the first problem is a 400 naming the parameter. */
function parseQuery<T>(schema: z.ZodType<T>, query: Record<string, string>): T {
  const parsed = schema.safeParse(query);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = String(issue?.path[0] ?? 'query');
  throw new GatewayError('invalid_request', { message: `${field}: ${issue?.message}`, details: { field } });
}

/** The journal (pages, NDJSON stream, HAR export), the findings and the client report. */
export function registerJournalAdmin(kit: AdminKit) {
  const { route, ok, runtime, control, queryOf } = kit;
  route('getJournal', async (ctx) => {
    const query = parseQuery(journalQuery, queryOf(ctx));
    // With a shared store, the journal of every instance.
    // A page at most MAX_JOURNAL_PAGE entries long: page on with since=next_since while `more`.
    // Serialised in slices, the event loop free between them.
    const page = await runtime.state.journal.page(query);
    return respondJsonText(ctx, await journalPageJson(page));
  });
  route('streamJournal', async (ctx) => {
    const query = parseQuery(journalExportQuery, queryOf(ctx));
    // Streamed in slices (every instance's entries with a shared store; a store down is a 503 before the
    // first byte): the entries recorded up to X-Journal-Until, oldest first, one JSON entry a line.
    const exported = await runtime.state.journal.exportSlices(query);
    return {
      ...respondText(ctx, '', 'application/x-ndjson; charset=utf-8', {
        'cache-control': 'no-store',
        'x-journal-until': String(exported.until),
      }),
      // HEAD: the headers only, nothing read.
      ...(ctx.request.method === 'HEAD' ? {} : { stream: exported.slices }),
    };
  });
  route('clearJournal', async (ctx) => {
    await runtime.state.journal.clear();
    return ok(ctx, { entries: [] });
  });

  /** The journal's entries a query asks for: every instance's with a shared store. */
  const entriesOf = async (query: { agent?: string; since?: number; limit?: number }) =>
    await runtime.state.journal.list(query);
  route('exportJournal', async (ctx) => {
    const { format: _format, ...query } = parseQuery(exportQuery, queryOf(ctx));
    // Streamed in slices with backpressure, as the NDJSON export (the same bytes as one JSON answer).
    const { slices, dropped } = await runtime.state.journal.entrySlices(query);
    const har = harTextSlices(slices, ctx.request.origin, dropped);
    return { ...respondJsonText(ctx, ''), ...(ctx.request.method === 'HEAD' ? {} : { stream: har }) };
  });
  route('getFindings', async (ctx) => {
    const q = parseQuery(findingsQuery, queryOf(ctx));
    const { entries, dropped } = await entriesOf({ agent: q.agent });
    return ok(ctx, {
      judged: entries.filter((e) => e.operation !== 'other' && !e.fault).length,
      dropped,
      rules: findingsOf(entries, q.per_rule),
    });
  });

  route('getClientReport', async (ctx) => {
    const q = parseQuery(reportQuery, queryOf(ctx));
    return ok(ctx, await control.clientReport(q.agent, fromQuery(reportOptionsSchema, q)));
  });
}
