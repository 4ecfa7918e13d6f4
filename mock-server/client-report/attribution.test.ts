import { describe, expect, it } from 'vitest';
import { recordedEntry } from '../../test/support/synthetic-journal.ts';
import { loadConfig } from '../config/load-config.ts';
import { loadCorpus } from '../providers/corpus.ts';
import { agentRequests } from './attribution.ts';
import { createClientReport, formatClientReport } from './report.ts';

const corpus = loadCorpus(loadConfig().corpus);
const connection = (id: number) => ({ connection: id, connection_opened_ms: 0 });
const refused = (t: number, conn: number) =>
  recordedEntry(t, {
    agent: 'tok_1a2b3c4d',
    token: 'tok_1a2b3c4d',
    status: 401,
    code: 'invalid_identity_token',
    own_key_unknown: true,
    ...connection(conn),
  });

describe('every request is somebody’s: the report ties unnamed requests by their connection', () => {
  it('a refused token no one named, on a connection the agent used named: the agent’s, and the resend is seen', () => {
    const entries = [
      refused(0, 1),
      refused(10, 1),
      recordedEntry(20, { method: 'POST', path: '/idp/token', operation: 'idp.token', ...connection(1) }),
      recordedEntry(30, { agent: 'b', ...connection(2) }),
    ];
    const { entries: own, unattributed } = agentRequests(entries, 'a', 0);
    expect(own.map((e) => [e.seq, e.attributed_by, e.own_key_unknown])).toEqual([
      [entries[0]?.seq, 'connection', undefined],
      [entries[1]?.seq, 'connection', undefined],
      [entries[2]?.seq, undefined, undefined],
    ]);
    expect(unattributed).toBeUndefined();
    const report = createClientReport({ agent: 'a', entries, rateLimitRules: [], corpus });
    expect(report.violations.map((v) => v.rule)).toEqual(['refresh-invalid-token']);
  });

  it('what no connection ties stays nobody’s: counted with why, and refresh-invalid-token is not observed', () => {
    const entries = [
      refused(0, 7),
      refused(10, 7),
      recordedEntry(20, { agent: undefined, path: '/v1/health', operation: 'health' }),
      recordedEntry(30, { ...connection(1) }),
      // A connection two agents used names neither.
      recordedEntry(40, { ...connection(3) }),
      recordedEntry(50, { agent: 'b', ...connection(3) }),
      refused(60, 3),
    ];
    const report = createClientReport({ agent: 'a', entries, rateLimitRules: [], corpus });
    expect(report.requests).toBe(2);
    expect(report.unattributed?.requests).toBe(4);
    expect(report.unattributed?.reasons).toEqual([
      {
        reason: 'a token the target never named (its whoami refused it), on a connection no named agent used',
        requests: 3,
      },
      {
        reason: 'neither a token nor an API key of a known agent, and no connection to tie it to',
        requests: 1,
      },
    ]);
    expect(report.violations).toEqual([]);
    expect(report.rules.find((r) => r.id === 'refresh-invalid-token')?.unobserved).toMatch(
      /^3 request\(s\) refused invalid_identity_token carried a token no agent was named for/,
    );
    expect(formatClientReport(report)).toContain(
      'Not judged: 4 request(s) of the journal belong to no agent (3 with a token the target never named',
    );
    expect(formatClientReport(report)).toContain('NOT OBSERVED  refresh-invalid-token');
  });

  it('a token naming one agent, resent on a connection that carried another’s requests: the sender’s', () => {
    // agent-early mints a token on connection 4, then resends agent-verified's token cached from an earlier
    // gateway (named by its claim) twice on the same connection: its token cache mixed the agents up.
    const stale = (t: number, conn: number) =>
      recordedEntry(t, {
        agent: 'verified',
        attributed_by: 'token_claim',
        token: 'tok_9f8e7d6c',
        status: 401,
        code: 'invalid_identity_token',
        ...connection(conn),
      });
    const entries = [
      recordedEntry(0, {
        agent: 'early',
        method: 'POST',
        path: '/idp/token',
        operation: 'idp.token',
        ...connection(4),
      }),
      stale(10, 4),
      stale(20, 4),
      // On a connection no named request used, the claim stands.
      stale(30, 5),
    ];
    const early = agentRequests(entries, 'early', 0).entries;
    expect(early.map((e) => [e.seq, e.attributed_by])).toEqual([
      [entries[0]?.seq, undefined],
      [entries[1]?.seq, 'connection'],
      [entries[2]?.seq, 'connection'],
    ]);
    expect(agentRequests(entries, 'verified', 0).entries.map((e) => e.seq)).toEqual([entries[3]?.seq]);
    const report = createClientReport({ agent: 'early', entries, rateLimitRules: [], corpus });
    expect(report.violations.map((v) => v.rule)).toEqual(['refresh-invalid-token']);
  });
});
