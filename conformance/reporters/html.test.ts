import { describe, expect, it } from 'vitest';
import { checkResult, runReport } from '../../test/support/conformance-report.ts';
import { primarySection } from '../../vocabulary/spec-ref.ts';
import type { CheckResult } from '../model/check-result.ts';
import { escapeHtml, toHtmlReport } from './html.ts';

const check = (over: Parameters<typeof checkResult>[0]) =>
  checkResult({ durationMs: 1200, requests: 3, ...over });

// What a hostile gateway may send back: markup in the body, the headers and the message, control characters.
const HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>';
const failed = check({
  id: 'auth.invalid-token',
  verdict: 'fail',
  specRef: [{ section: 5, rules: [3] }, { section: 7 }],
  message: `Expected 401; got 500 with body "${HOSTILE} \u001b[31m"`,
  reproduction: {
    curl: "curl -sS -i -X GET 'http://127.0.0.1:1/v1/whoami' -H 'X-Agent-Identity: <$TOKEN>'",
    seed: 42,
    path: 'long:0:1',
    counterexample: `["${'x'.repeat(50)}"]`,
    replay:
      "npx --no-install agent-gateway check --base-url 'http://127.0.0.1:1' --only auth.invalid-token --seed 42",
    exchange: {
      request: {
        method: 'GET',
        url: 'http://127.0.0.1:1/v1/whoami',
        headers: [['X-Agent-Identity', '<$TOKEN>']],
      },
      response: {
        status: 500,
        headers: { 'content-type': 'text/html', 'x-evil': `"><script>alert(3)</script>` },
        body: `<html>${HOSTILE}</html>`,
        length: 9000,
      },
      attempts: 4,
    },
  },
});

const report = runReport(
  [
    check({ id: 'health.without-token', verdict: 'pass' }),
    failed,
    check({
      id: 'authz.access-denied',
      verdict: 'skipped',
      specRef: [{ section: 3 }],
      message: 'needs --denied-token',
    }),
    check({
      id: 'ratelimit.burst-429',
      verdict: 'inconclusive',
      specRef: [{ section: 8 }, { section: 7 }],
      level: 'SHOULD',
      message: `no 429 in 300 ${HOSTILE}`,
      unobserved: 'rate-limit-budget',
    }),
  ],
  { target: 'http://127.0.0.1:1/<b>' },
);

describe('HTML report', () => {
  const html = toHtmlReport(report, 1);

  it('is one self-contained, inert file: no script, no external resource, a CSP that forbids both', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//i);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'`);
  });

  it('escapes everything that came from the gateway, headers and the target included', () => {
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;');
    expect(html).toContain('x-evil: &quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;');
    expect(html).toContain('http://127.0.0.1:1/&lt;b&gt;');
    // A control character is shown, not sent to whoever views the source in a terminal.
    expect(html).toContain('\\x1b[31m');
    expect(html).not.toContain('\u001b');
  });

  it('has the verdict table by spec section, each check under the first section it cites', () => {
    const headings = [...html.matchAll(/<h3 id="section-(\d+)">§\d+ ([^<]+)<\/h3>/g)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(headings).toEqual([
      ['3', 'States and transitions'],
      ['4', 'Endpoints'],
      ['5', 'Authentication'],
      ['8', 'Limits'],
    ]);
    const section5 = html.slice(html.indexOf('id="section-5"'), html.indexOf('id="section-8"'));
    expect(section5).toContain('<a href="#check-auth.invalid-token"><code>auth.invalid-token</code></a>');
    expect(section5).toContain('<span class="badge fail">fail</span>');
    // Per-check timings.
    expect(section5).toContain('<td class="num">1.2 s</td><td class="num">3</td>');
  });

  it('shows each failure with its exchange, curl and replay command, and the run with its seed and timings', () => {
    const article = html.slice(html.indexOf('<article class="failure" id="check-auth.invalid-token">'));
    expect(article).toContain(
      '<h4>Request</h4><pre class="request">GET http://127.0.0.1:1/v1/whoami\nX-Agent-Identity: &lt;$TOKEN&gt;</pre>',
    );
    expect(article).toContain(
      '<h4>Response (after 4 attempts)</h4><pre class="response">HTTP 500\ncontent-type: text/html',
    );
    expect(article).toContain('… (cut: the body had 9,000 characters)');
    expect(article).toContain(
      '<pre class="curl">curl -sS -i -X GET &#39;http://127.0.0.1:1/v1/whoami&#39; -H &#39;X-Agent-Identity: &lt;$TOKEN&gt;&#39;</pre>',
    );
    expect(article).toContain('<pre class="replay">npx --no-install agent-gateway check');
    expect(html).toContain('<dt>seed</dt><dd><code>42</code>');
    expect(html).toContain('<dt>duration</dt><dd>2.5 s, 120 requests</dd>');
    expect(html).toContain('<dt>started</dt><dd>2026-11-23T00:00:00.000Z</dd>');
  });

  it('lists skipped and inconclusive checks with why, and says a run that passed passed', () => {
    expect(html).toContain(
      '<code>ratelimit.burst-429</code> <span class="badge inconclusive">inconclusive</span> (no 429 within --rate-limit-budget)',
    );
    expect(html).toContain('<span class="outcome-1">failed</span>');
    const passed = toHtmlReport({ ...report, checks: [report.checks[0] as CheckResult] }, 0);
    expect(passed).toContain('<span class="outcome-0">passed</span>');
    expect(passed).not.toContain('id="failures"');
  });

  it('escapeHtml and primarySection', () => {
    expect(escapeHtml(`a&b<c>"d"'e'`)).toBe('a&amp;b&lt;c&gt;&quot;d&quot;&#39;e&#39;');
    // A reference is data now: a check is filed under its first citation (a reference without one no
    // longer type-checks, so the old '?' for an unreadable one has nothing left to test).
    expect(primarySection([{ section: 5, rules: [3, 4] }])).toBe(5);
    expect(primarySection([{ section: 8, note: 'RFC 9110 §10.2.3' }])).toBe(8);
  });
});
