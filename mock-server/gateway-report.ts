import { type ClientReport, createClientReport, formatClientReport } from './client-report/report.ts';
import type { ClientReportOptions } from './client-report/types.ts';
import { GatewayError } from './errors.ts';
import type { JournalEntry } from './journal/journal.ts';
import type { Corpus } from './providers/corpus.ts';
import type { Runtime } from './runtime.ts';

/**
 * A gateway's client reports: read from this process's journal (`clientReport`, synchronous) or from the
 * journal in use (`readClientReport`: the shared one with a shared store), each graded from the agent's
 * entries, with its timeline and its text (what the admin API serves).
 */
export function createReportReader(runtime: Runtime, corpus: Corpus) {
  /**
   * The client report, synchronously, from this process's journal (a test's small one). On a shared store
   * the journal is the store's, read asynchronously: this throws, saying to use `readClientReport`.
   */
  const clientReport = (agent: string, reportOptions?: Partial<ClientReportOptions>): ClientReport => {
    if (runtime.shared)
      throw new Error(
        'This gateway is on a shared store: its journal is in the store, read asynchronously. Use `await gateway.readClientReport(agent)` or `await expect(gateway).toFollowClientRules(agent)`.',
      );
    return reportOf(
      agent,
      runtime.journal.list({ agent: { agent, unnamed: true } }),
      runtime.journal.dropped,
      reportOptions,
    );
  };
  /**
   * How many dropped entries the report mentions: with `since` (a test's mark), only when some of them came
   * after it, i.e. the oldest entry held is later than the one after `since`. On a shared store the oldest
   * held is not at hand: every drop is mentioned.
   */
  const droppedAfter = (dropped: number, since: number | undefined) => {
    if (dropped === 0 || since === undefined || runtime.shared) return dropped;
    const oldest = runtime.journal.page({}, 1).entries[0]?.seq ?? 0;
    return oldest > since + 1 ? dropped : 0;
  };
  /** The client report from whichever journal is in use: the shared one when there is a shared store. */
  const readClientReport = async (
    agent: string,
    reportOptions?: Partial<ClientReportOptions>,
  ): Promise<ClientReport> => {
    // Every one of the agent's entries, read in bounded slices with the event loop free between them.
    // With the entries named for nobody: the report ties those its connections show to be the agent's.
    const { entries, dropped } = await runtime.state.journal.readInSlices({
      agent: { agent, unnamed: true },
    });
    return reportOf(agent, entries, dropped, reportOptions);
  };
  /**
   * Grades an agent against the spec's client safety rules from its entries. An agent the gateway neither
   * knows nor journaled is a mistake (a typo), not an agent that did nothing: 404 not_found.
   */
  const reportOf = (
    agent: string,
    entries: JournalEntry[],
    dropped: number,
    reportOptions?: Partial<ClientReportOptions>,
  ): ClientReport => {
    if (!runtime.registry.get(agent) && !entries.some((e) => e.agent === agent)) {
      const known = runtime.registry.list().map((a) => a.id);
      throw new GatewayError('not_found', {
        message: `No agent "${agent}" and no request from it in the journal. Agents: ${known.join(', ')}.`,
      });
    }
    const report = createClientReport({
      agent,
      entries,
      rateLimitRules: runtime.config.rate_limits.rules,
      corpus,
      tools: runtime.tools,
      options: reportOptions,
      dropped: droppedAfter(dropped, reportOptions?.since),
    });
    // Its text too, so a harness in any language shows what the JS matchers show without a formatter of its own.
    return { ...report, text: formatClientReport(report) };
  };
  return { clientReport, readClientReport };
}
