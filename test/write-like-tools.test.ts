import { describe, expect, it } from 'vitest';
import { SNAPSHOT_PLAIN, SNAPSHOT_WRITE_LIKE, snapshotGateway } from './gateways/write-like-gateways.ts';
import { proveAgainst } from './support/proof.ts';

/*
 * A write-like extra tool (web.snapshot refuses a repeat of a URL without the first call's Idempotency-Key,
 * 409). The proof catalogue holds it declared write-like (valid: write-like-snapshot) and a twin refusing a
 * repeat with the key (faulty: write-like-key-ignored); here, the same gateway not declared write-like: the
 * suite fails retry safety on it, naming the tool and the declaration that would tell the suite what it is.
 */
describe('a write-like tool not declared so', () => {
  it('fails retry safety with fix texts naming the operation and the write-like declaration', async () => {
    const { report, failing } = await proveAgainst({
      id: 'snapshot-undeclared',
      description: 'web.snapshot not declared write-like',
      start: snapshotGateway({ declaration: SNAPSHOT_PLAIN }),
    });
    expect(failing).toContain('retry.sequential');
    expect(report.tools.find((t) => t.name === 'web.snapshot')?.writeLike).toBeUndefined();
    for (const check of report.checks.filter((c) => c.verdict === 'fail')) {
      expect(check.message, check.id).toContain('POST /v1/web/snapshot');
      expect(check.message, check.id).toContain('--tool web.snapshot:write-like=/v1/web/snapshot');
      expect(check.message, check.id).not.toContain('make whoami, search and fetch safe');
    }
  }, 60_000);

  it('declared write-like, is called with one Idempotency-Key per call and passes every check', async () => {
    const { report, failing } = await proveAgainst({
      id: 'snapshot-declared',
      description: 'web.snapshot declared write-like',
      start: snapshotGateway({ declaration: SNAPSHOT_WRITE_LIKE }),
    });
    expect(failing, report.checks.map((c) => `${c.id}: ${c.message}`).join('\n')).toEqual([]);
    expect(report.tools.find((t) => t.name === 'web.snapshot')).toEqual({
      name: 'web.snapshot',
      path: '/v1/web/snapshot',
      writeLike: true,
    });
    for (const id of ['retry.sequential', 'retry.concurrent', 'auth.header-name-case-insensitive'])
      expect(report.checks.find((c) => c.id === id)?.verdict, id).toBe('pass');
  }, 60_000);
});
