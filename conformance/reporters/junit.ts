import { formatSpecRef } from '../../vocabulary/spec-ref.ts';
import type { ConformanceReport } from '../run/runner.ts';
import { blockingUnobserved, unobservedRemedy } from '../run/unobserved.ts';

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
 * as properties; failures carry the message and reproduction; an unobserved MUST check not accepted with
 * --allow-unobserved is an <error> (it makes the run exit 2); other skipped and inconclusive checks are
 * <skipped> with the reason.
 */
export function toJunitXml(report: ConformanceReport): string {
  const s = report.summary;
  // An unobserved MUST check the user did not accept is an error (the run exits 2), not a skip.
  const blocking = new Set(
    blockingUnobserved(report.checks, false, report.allowedUnobserved, report.expectedResults).map(
      (c) => c.id,
    ),
  );
  const errors = blocking.size;
  const cases = report.checks.map((c) => {
    const family = c.id.split('.')[0];
    const unobserved = c.unobserved ? `\n        <property name="unobserved" value="${c.unobserved}"/>` : '';
    const properties = `      <properties>\n        <property name="spec_ref" value="${escapeXml(formatSpecRef(c.specRef))}"/>\n        <property name="level" value="${c.level}"/>${unobserved}\n      </properties>`;
    let outcome = '';
    if (c.verdict === 'fail') {
      const r = c.reproduction;
      const details = [
        c.message,
        r?.counterexample && `counterexample: ${r.counterexample}`,
        r?.curl && `reproduce: ${r.curl}`,
        r?.script && `reproduce the burst:\n${r.script}`,
        r?.replay && `replay: ${r.replay}`,
      ]
        .filter(Boolean)
        .join('\n');
      outcome = `\n      <failure type="${c.level}" message="${escapeXml(c.message)}">${escapeXml(details)}</failure>`;
    } else if (blocking.has(c.id)) {
      const why = ` What would let it observe: ${unobservedRemedy(c)}.`;
      outcome = `\n      <error type="unobserved" message="${escapeXml(`not observed (${c.unobserved ?? c.verdict}): ${c.message}`)}">${escapeXml(`${c.message}${why}`)}</error>`;
    } else if (c.verdict !== 'pass') {
      const verdict = c.unobserved ? `${c.verdict} (${c.unobserved})` : c.verdict;
      outcome = `\n      <skipped message="${escapeXml(`${verdict}: ${c.message}`)}"/>`;
    }
    return `    <testcase classname="conformance.${family}" name="${escapeXml(`${c.id}: ${c.title}`)}" time="${seconds(c.durationMs)}">\n${properties}${outcome}\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="agent-tool-gateway-conformance" tests="${report.checks.length}" failures="${s.fail}" skipped="${s.skipped + s.inconclusive - errors}" errors="${errors}" time="${seconds(report.durationMs)}">`,
    `  <testsuite name="${escapeXml(`conformance ${report.target}`)}" tests="${report.checks.length}" failures="${s.fail}" errors="${errors}" skipped="${s.skipped + s.inconclusive - errors}" time="${seconds(report.durationMs)}" timestamp="${report.startedAt}">`,
    `    <properties>\n      <property name="target" value="${escapeXml(report.target)}"/>\n      <property name="seed" value="${report.seed}"/>\n      <property name="num_runs" value="${report.numRuns}"/>\n    </properties>`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
