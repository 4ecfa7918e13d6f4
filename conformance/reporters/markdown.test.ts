import { describe, expect, it } from 'vitest';
import { checkResult, runReport } from '../../test/support/conformance-report.ts';
import type { ConformanceReport } from '../run/runner.ts';
import { codeBlock, inlineCode, toMarkdownSummary } from './markdown.ts';

const check = checkResult;

const failed = check({
  id: 'auth.invalid-token',
  verdict: 'fail',
  specRef: [{ section: 5, rules: [3] }, { section: 7 }],
  // What a hostile gateway may send back: markup, a fence of its own, control characters.
  message: 'Expected 401; got 500 with body "<img src=x onerror=alert(1)> ``` # heading \u001b[31m"',
  reproduction: {
    curl: "curl -sS -i -X GET 'http://127.0.0.1:1/v1/whoami' -H 'X-Agent-Identity: a|b'",
    seed: 42,
    path: 'long:0:1',
    counterexample: `["${'x'.repeat(2000)}"]`,
    replay: "npx agent-gateway check --base-url 'http://127.0.0.1:1' --only auth.invalid-token --seed 42",
  },
});

const report = runReport([
  check({ id: 'health.without-token', verdict: 'pass', title: 'health | no token' }),
  failed,
  check({ id: 'authz.access-denied', verdict: 'skipped', message: 'needs --denied-token' }),
  check({
    id: 'ratelimit.burst-429',
    verdict: 'inconclusive',
    level: 'SHOULD',
    message: 'no 429 in 300',
    unobserved: 'rate-limit-budget',
  }),
]);

describe('Markdown summary', () => {
  const markdown = toMarkdownSummary(report, 1);

  it('heads with the outcome, the target, the counts, the seed and the exit code', () => {
    expect(markdown.split('\n')[0]).toBe('## Agent Tool Gateway conformance: ❌ failed');
    expect(markdown).toContain('Target `http://127.0.0.1:1`. 4 checks: 1 pass, 1 fail (1 MUST, 0 SHOULD)');
    expect(markdown).toContain('seed 42; exit code 1.');
    // An inconclusive check says which budget ran out; a call never served is counted with the failures.
    expect(markdown).toContain('1 inconclusive (1 no 429 within --rate-limit-budget)');
    expect(markdown).toContain(
      '- `ratelimit.burst-429` SHOULD inconclusive: (no 429 within --rate-limit-budget) `no 429 in 300` What would let it observe:',
    );
    const neverServed: ConformanceReport = {
      ...report,
      summary: { ...report.summary, notServed: 1 },
      checks: [check({ ...failed, id: 'authz.allowed-calls-served', unobserved: 'not-served' })],
    };
    const served = toMarkdownSummary(neverServed, 1);
    expect(served).toContain('1 MUST, 0 SHOULD; 1 because the gateway never served the calls');
    expect(served).toMatch(/#### `authz\.allowed-calls-served` .*: \(never served\) /);
    expect(toMarkdownSummary(report, 0).split('\n')[0]).toMatch(/✅ passed$/);
    expect(toMarkdownSummary(report, 2).split('\n')[0]).toMatch(/could not run or could not see every rule$/);
  });

  it('has a table with one row per check: verdict, level, id, spec section, title (pipes escaped)', () => {
    const rows = markdown.split('\n').filter((line) => line.startsWith('| '));
    expect(rows).toHaveLength(2 + report.checks.length);
    expect(rows[2]).toBe(
      '| ✅ pass | MUST | `health.without-token` | §4 rule 1 | health \\| no token | 0.0 s, 1 request |',
    );
    expect(rows[3]).toBe(
      '| ❌ fail | MUST | `auth.invalid-token` | §5 rule 3, §7 | title of auth.invalid-token | 0.0 s, 1 request |',
    );
    expect(rows[4]).toMatch(/^\| ⏭️ skipped \| MUST \| `authz.access-denied` \|/);
    expect(rows[5]).toMatch(/^\| ⚠️ inconclusive \| SHOULD \| `ratelimit.burst-429` \|/);
  });

  it('gives each failure its message, curl reproduction and replay command in code blocks', () => {
    const failures = markdown.slice(markdown.indexOf('### Failures'));
    expect(failures).toContain('#### `auth.invalid-token` (MUST, spec §5 rule 3, §7)');
    expect(failures).toContain(`\`\`\`sh\n${failed.reproduction?.curl}\n\`\`\``);
    expect(failures).toContain(`\`\`\`sh\n${failed.reproduction?.replay}\n\`\`\``);
    // Long counterexamples are cut for the page.
    expect(failures).toMatch(/x{100}… \(2004 characters\)/);
  });

  it('lists why checks were skipped or inconclusive, and how to replay the run', () => {
    expect(markdown).toContain('- `authz.access-denied` MUST skipped: `needs --denied-token`');
    expect(markdown).toContain('The same command with `--seed 42` generates the same cases again');
  });

  it('keeps what the gateway sent as text: its fence cannot close ours, control characters are escaped', () => {
    const block = codeBlock(failed.message, 'text');
    expect(block.startsWith('````text\n')).toBe(true);
    expect(block.endsWith('\n````')).toBe(true);
    expect(markdown).toContain(block);
    expect(markdown).not.toContain('\u001b');
    expect(markdown).toContain('\\x1b[31m');
    expect(inlineCode('a ``b`` c')).toBe('```a ``b`` c```');
    expect(inlineCode('`x`')).toBe('`` `x` ``');
    expect(inlineCode('two\nlines')).toBe('`two lines`');
  });
});
