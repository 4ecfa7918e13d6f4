import type { ConformanceReport } from '../runner.ts';

// XML 1.0 allows no control characters but tab, newline and carriage return.
const escapeXml = (text: string) =>
  text
    .replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/**
 * JUnit XML: one test case per check, its spec section and level (and why it could not observe, if so)
 * as properties; failures carry the message and reproduction; skipped and inconclusive checks are
 * <skipped> with the reason.
 */
export function toJunitXml(report: ConformanceReport): string {
  const s = report.summary;
  const cases = report.checks.map((c) => {
    const family = c.id.split('.')[0];
    const unobserved = c.unobserved ? `\n        <property name="unobserved" value="${c.unobserved}"/>` : '';
    const properties = `      <properties>\n        <property name="spec_ref" value="${escapeXml(c.specRef)}"/>\n        <property name="level" value="${c.level}"/>${unobserved}\n      </properties>`;
    let outcome = '';
    if (c.verdict === 'fail') {
      const r = c.reproduction;
      const details = [
        c.message,
        r?.counterexample && `counterexample: ${r.counterexample}`,
        r?.curl && `reproduce: ${r.curl}`,
        r?.replay && `replay: ${r.replay}`,
      ]
        .filter(Boolean)
        .join('\n');
      outcome = `\n      <failure type="${c.level}" message="${escapeXml(c.message)}">${escapeXml(details)}</failure>`;
    } else if (c.verdict !== 'pass') {
      const verdict = c.unobserved ? `${c.verdict} (${c.unobserved})` : c.verdict;
      outcome = `\n      <skipped message="${escapeXml(`${verdict}: ${c.message}`)}"/>`;
    }
    return `    <testcase classname="conformance.${family}" name="${escapeXml(`${c.id}: ${c.title}`)}" time="${seconds(c.durationMs)}">\n${properties}${outcome}\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="agent-tool-gateway-conformance" tests="${report.checks.length}" failures="${s.fail}" skipped="${s.skipped + s.inconclusive}" time="${seconds(report.durationMs)}">`,
    `  <testsuite name="${escapeXml(`conformance ${report.target}`)}" tests="${report.checks.length}" failures="${s.fail}" errors="0" skipped="${s.skipped + s.inconclusive}" time="${seconds(report.durationMs)}" timestamp="${report.startedAt}">`,
    `    <properties>\n      <property name="target" value="${escapeXml(report.target)}"/>\n      <property name="seed" value="${report.seed}"/>\n      <property name="num_runs" value="${report.numRuns}"/>\n    </properties>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
