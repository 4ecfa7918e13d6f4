import { describe, expect, it } from 'vitest';
import { runReport } from '../../test/support/conformance-report.ts';
import { toJunitXml } from './junit.ts';

const report = runReport(
  [
    {
      id: 'a.pass',
      title: 'passes',
      specRef: [{ section: 4 }],
      level: 'MUST',
      verdict: 'pass',
      message: 'ok',
      durationMs: 5,
      requests: 1,
    },
    {
      id: 'b.fail',
      title: 'fails "badly" & <loudly>',
      specRef: [{ section: 5, rules: [3] }],
      level: 'MUST',
      verdict: 'fail',
      message: 'Expected 401; got 500 with body "\u0000\u001b[31m"',
      reproduction: {
        curl: "curl -H 'X: <y>'",
        seed: 7,
        path: 'long:1:0',
        counterexample: '["x"]',
        replay: 'npx agent-gateway check',
      },
      durationMs: 10,
      requests: 5,
    },
    {
      id: 'c.skip',
      title: 'skipped',
      specRef: [{ section: 3 }],
      level: 'MUST',
      verdict: 'skipped',
      message: 'needs --denied-token',
      durationMs: 0,
      requests: 0,
    },
    {
      id: 'd.unsure',
      title: 'unsure',
      specRef: [{ section: 8 }],
      level: 'SHOULD',
      verdict: 'inconclusive',
      unobserved: 'rate-limit-budget',
      message: 'no 429',
      durationMs: 1,
      requests: 4,
    },
  ],
  {
    target: 'http://gw.example/?a=1&b=<2>',
    seed: 7,
    startedAt: '2026-11-21T00:00:00.000Z',
    durationMs: 1500,
    requests: 10,
  },
);

/** A strict enough check that the XML is well-formed: no control characters, tags balance. */
function assertWellFormed(xml: string) {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point (XML 1.0 forbids them)
  expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
  const stack: string[] = [];
  for (const [, closing, name, selfClosing] of xml.matchAll(/<(\/?)([\w:]+)[^>]*?(\/?)>/g)) {
    if (selfClosing) continue;
    if (closing) expect(stack.pop()).toBe(name);
    else stack.push(name as string);
  }
  expect(stack).toEqual([]);
}

describe('JUnit report', () => {
  const xml = toJunitXml(report);

  it('is well-formed XML, with text escaped and control characters replaced', () => {
    assertWellFormed(xml);
    expect(xml).toContain('fails &quot;badly&quot; &amp; &lt;loudly&gt;');
    expect(xml).toContain('http://gw.example/?a=1&amp;b=&lt;2&gt;');
  });

  it('has one test case per check, with spec section and level; failures, skips and inconclusives are marked', () => {
    expect(xml.match(/<testcase /g)).toHaveLength(4);
    expect(xml).toContain('<property name="spec_ref" value="§5 rule 3"/>');
    expect(xml).toMatch(
      /<failure type="MUST" message="Expected 401[^"]*">[^<]*reproduce: curl -H &apos;X: &lt;y&gt;&apos;/,
    );
    expect(xml).toContain('<skipped message="skipped: needs --denied-token"/>');
    expect(xml).toContain('<skipped message="inconclusive (rate-limit-budget): no 429"/>');
    expect(xml).toContain('<property name="unobserved" value="rate-limit-budget"/>');
    expect(xml).toMatch(/<testsuites [^>]*tests="4" failures="1" skipped="2"/);
  });
});
