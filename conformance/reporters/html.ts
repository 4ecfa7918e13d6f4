import { printable } from '../../vocabulary/redact.ts';
import { formatSpecRef, primarySection, SPEC_SECTIONS, type SpecSection } from '../../vocabulary/spec-ref.ts';
import type { CheckResult, ExchangeRecord } from '../model/check-result.ts';
import type { ConformanceReport } from '../run/runner.ts';
import { unobservedCheck, unobservedRemedy } from '../run/unobserved.ts';
import { costOf } from './console.ts';
import { summarySentence, UNOBSERVED_LABEL } from './summary-sentence.ts';

const VERDICT_LABEL: Record<CheckResult['verdict'], string> = {
  pass: 'pass',
  fail: 'fail',
  skipped: 'skipped',
  inconclusive: 'inconclusive',
};

const OUTCOME: Record<number, string> = {
  0: 'passed',
  1: 'failed',
  2: 'could not run or could not see every rule',
};

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Text as HTML text or attribute value: markup characters escaped, and the characters that would drive a
 * terminal or reorder a line shown as `\xNN` (what the console and Markdown reports print). Everything the
 * gateway under test sent goes through here: a hostile gateway cannot add markup to the report.
 *
 * @example
 * escapeHtml('<script>alert(1)</script>'); // '&lt;script&gt;alert(1)&lt;/script&gt;'
 */
export function escapeHtml(text: string): string {
  return printable(text).replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

/** An id for an HTML anchor: check ids are `a.b-c`, anything else is replaced. */
const anchor = (id: string) => `check-${id.replace(/[^A-Za-z0-9._-]/g, '_')}`;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const pre = (text: string, className: string) => `<pre class="${className}">${escapeHtml(text)}</pre>`;

function requestText(record: ExchangeRecord): string {
  const { request } = record;
  const lines = [`${request.method} ${request.url}`, ...request.headers.map(([n, v]) => `${n}: ${v}`)];
  if (request.body !== undefined) lines.push('', request.body);
  return lines.join('\n');
}

function responseText(record: ExchangeRecord): string {
  const { response } = record;
  if (response.status === 0) return `no response (${response.error ?? 'connection failed'})`;
  const lines = [
    `HTTP ${response.status}`,
    ...Object.entries(response.headers).map(([n, v]) => `${n}: ${v}`),
    '',
    response.body,
  ];
  if (response.length !== undefined)
    lines.push(`… (cut: the body had ${response.length.toLocaleString('en')} characters)`);
  return lines.join('\n');
}

function failureArticle(check: CheckResult): string {
  const r = check.reproduction;
  const why = check.unobserved ? ` (${UNOBSERVED_LABEL[check.unobserved]})` : '';
  const parts = [
    `<article class="failure" id="${anchor(check.id)}">`,
    `<h3><code>${escapeHtml(check.id)}</code> <span class="level">${check.level}</span> spec ${escapeHtml(formatSpecRef(check.specRef))}${escapeHtml(why)}</h3>`,
    `<p class="title">${escapeHtml(check.title)}</p>`,
    pre(check.message, 'message'),
  ];
  if (r?.exchange) {
    const attempts = r.exchange.attempts > 1 ? ` (after ${r.exchange.attempts} attempts)` : '';
    parts.push(
      '<div class="exchange">',
      `<div><h4>Request</h4>${pre(requestText(r.exchange), 'request')}</div>`,
      `<div><h4>Response${escapeHtml(attempts)}</h4>${pre(responseText(r.exchange), 'response')}</div>`,
      '</div>',
    );
  }
  if (r?.curl)
    parts.push(
      '<h4>Reproduce with curl <span class="hint">(tokens stay in $TOKEN / $DENIED_TOKEN)</span></h4>',
      pre(r.curl, 'curl'),
    );
  if (r?.script)
    parts.push(
      '<h4>Reproduce the burst <span class="hint">(only a burst shows this)</span></h4>',
      pre(r.script, 'script'),
    );
  if (r?.replay) parts.push('<h4>Replay the shrunk counterexample</h4>', pre(r.replay, 'replay'));
  else if (r?.seed !== undefined && r.path)
    parts.push(`<p>Seed ${r.seed}, path <code>${escapeHtml(r.path)}</code>.</p>`);
  if (r?.counterexample)
    parts.push(
      `<details><summary>Counterexample (shrunk, ${r.counterexample.length.toLocaleString('en')} characters)</summary>${pre(r.counterexample, 'counterexample')}</details>`,
    );
  parts.push(`<p class="timing">${escapeHtml(costOf(check))}.</p>`, '</article>');
  return parts.join('\n');
}

function verdictRow(check: CheckResult): string {
  const linked = check.verdict !== 'pass';
  const id = `<code>${escapeHtml(check.id)}</code>`;
  const why = check.unobserved ? ` <span class="why">(${UNOBSERVED_LABEL[check.unobserved]})</span>` : '';
  return [
    `<tr class="${check.verdict}">`,
    `<td><span class="badge ${check.verdict}">${VERDICT_LABEL[check.verdict]}</span>${why}</td>`,
    `<td>${check.level}</td>`,
    `<td>${linked ? `<a href="#${anchor(check.id)}">${id}</a>` : id}</td>`,
    `<td>${escapeHtml(formatSpecRef(check.specRef))}</td>`,
    `<td>${escapeHtml(check.title)}</td>`,
    `<td class="num">${seconds(check.durationMs)}</td>`,
    `<td class="num">${check.requests}${check.sharedWith?.length ? ` <span class="hint">+ the burst of ${escapeHtml(check.sharedWith.join(', '))}</span>` : ''}</td>`,
    '</tr>',
  ].join('');
}

function verdictTables(checks: readonly CheckResult[]): string {
  const bySection = new Map<SpecSection, CheckResult[]>();
  for (const check of checks) {
    const section = primarySection(check.specRef);
    bySection.set(section, [...(bySection.get(section) ?? []), check]);
  }
  const sections = [...bySection.keys()].sort((a, b) => a - b);
  const head =
    '<thead><tr><th>verdict</th><th>level</th><th>check</th><th>spec</th><th>what it checks</th><th>time</th><th>requests</th></tr></thead>';
  return sections
    .map((section) => {
      const rows = (bySection.get(section) ?? []).map(verdictRow).join('\n');
      const title = SPEC_SECTIONS[section];
      return `<h3 id="section-${section}">§${section} ${title}</h3>\n<table>${head}<tbody>\n${rows}\n</tbody></table>`;
    })
    .join('\n');
}

function unsureList(checks: readonly CheckResult[]): string {
  const items = checks.map(
    (c) =>
      `<li id="${anchor(c.id)}"><code>${escapeHtml(c.id)}</code> <span class="badge ${c.verdict}">${c.verdict}</span>${c.unobserved ? ` (${escapeHtml(UNOBSERVED_LABEL[c.unobserved])})` : ''}: ${escapeHtml(c.message)}${unobservedCheck(c) ? ` <span class="hint">What would let it observe: ${escapeHtml(unobservedRemedy(c))}.</span>` : ''}</li>`,
  );
  return `<ul class="unsure">\n${items.join('\n')}\n</ul>`;
}

const STYLE = `
:root { color-scheme: light; --pass: #1a7f37; --fail: #cf222e; --skip: #6e7781; --warn: #9a6700; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1.5rem; color: #1f2328; }
h1 { font-size: 1.6rem; margin: 0 0 .5rem; } h2 { margin-top: 2rem; border-bottom: 1px solid #d0d7de; }
h3 { margin: 1.4rem 0 .4rem; } h4 { margin: .8rem 0 .3rem; }
code, pre { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: .6rem .8rem; overflow-x: auto; white-space: pre-wrap; word-break: break-all; margin: 0; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #eaeef2; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; } th { font-weight: 600; background: #f6f8fa; }
.badge { display: inline-block; min-width: 6.5em; padding: 0 .4em; border-radius: 1em; color: #fff; font-size: 12px; font-weight: 600; text-align: center; }
.badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); } .badge.skipped { background: var(--skip); } .badge.inconclusive { background: var(--warn); }
.outcome-0 { color: var(--pass); } .outcome-1 { color: var(--fail); } .outcome-2 { color: var(--warn); }
dl.run { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: .8rem 0; } dl.run dt { font-weight: 600; } dl.run dd { margin: 0; }
.failure { border: 1px solid #ffcecb; border-left: 4px solid var(--fail); border-radius: 6px; padding: .6rem 1rem 1rem; margin: 1rem 0; }
.failure pre.message { background: #fff8f8; }
.exchange { display: grid; grid-template-columns: 1fr 1fr; gap: .8rem; } @media (max-width: 60rem) { .exchange { grid-template-columns: 1fr; } }
.level { font-size: 12px; border: 1px solid #d0d7de; border-radius: 4px; padding: 0 .3em; }
.hint, .why, .timing { color: #59636e; font-weight: normal; font-size: 13px; }
`;

/**
 * The HTML report of a run (`check --report-html FILE`): one self-contained file, no script and no
 * external resource (its Content-Security-Policy forbids both), for a person to read: the outcome, the
 * run's seed and timings, a verdict table per spec section, each failure with its request/response exchange,
 * curl reproduction, replay command and shrunk counterexample, and why checks were skipped or inconclusive.
 * Every text that came from the gateway is escaped.
 *
 * @example
 * writeFileSync('reports/conformance.html', toHtmlReport(report, exitCodeFor(report, false)));
 */
export function toHtmlReport(report: ConformanceReport, exitCode: number): string {
  const outcome = OUTCOME[exitCode] ?? `exit code ${exitCode}`;
  const failures = report.checks.filter((c) => c.verdict === 'fail');
  const unsure = report.checks.filter((c) => c.verdict === 'skipped' || c.verdict === 'inconclusive');
  const counts = summarySentence(report);
  const body = [
    `<header><h1>Agent Tool Gateway conformance: <span class="outcome-${exitCode}">${escapeHtml(outcome)}</span></h1>`,
    `<p>${escapeHtml(counts)}.</p>`,
    '<dl class="run">',
    `<dt>target</dt><dd><code>${escapeHtml(report.target)}</code></dd>`,
    `<dt>seed</dt><dd><code>${report.seed}</code> (the same command with <code>--seed ${report.seed}</code> generates the same cases again)</dd>`,
    `<dt>cases</dt><dd>${report.numRuns} per property</dd>`,
    `<dt>started</dt><dd>${escapeHtml(report.startedAt)}</dd>`,
    `<dt>duration</dt><dd>${seconds(report.durationMs)}, ${report.requests} requests</dd>`,
    `<dt>exit code</dt><dd>${exitCode}</dd>`,
    ...((report.allowedUnobserved ?? []).length > 0
      ? [
          `<dt>accepted unobserved</dt><dd>${report.allowedUnobserved.map((id) => `<code>${escapeHtml(id)}</code>`).join(', ')} (--allow-unobserved)</dd>`,
        ]
      : []),
    '</dl></header>',
    '<section id="verdicts"><h2>Verdicts by spec section</h2>',
    verdictTables(report.checks),
    '</section>',
  ];
  if (failures.length > 0)
    body.push('<section id="failures"><h2>Failures</h2>', ...failures.map(failureArticle), '</section>');
  if (unsure.length > 0)
    body.push(
      '<section id="unsure"><h2>Skipped and not observed</h2><p>Never a pass: a MUST check not observed (inconclusive, or skipped for want of an input) makes the run exit 2 unless accepted with <code>--allow-unobserved</code> or listed in <code>--expected-results</code>.</p>',
      unsureList(unsure),
      '</section>',
    );
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    // Self-contained and inert: inline styles only; no script, image, font or frame from anywhere.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">`,
    `<title>Conformance ${escapeHtml(outcome)}: ${escapeHtml(report.target)}</title>`,
    `<style>${STYLE}</style>`,
    '</head><body>',
    ...body,
    '</body></html>',
    '',
  ].join('\n');
}
