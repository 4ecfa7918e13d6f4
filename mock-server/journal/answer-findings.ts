import { PROTECTED_ENDPOINTS } from '../../vocabulary/endpoints.ts';
import { parseRetryAfter } from '../../vocabulary/retry-after.ts';
import { formatSpecRef, type SpecRef } from '../../vocabulary/spec-ref.ts';
import { TOOL_NAMES, TOOLS } from '../../vocabulary/tools.ts';
import { ERROR_CATALOGUE } from '../errors.ts';
import type { JournalEntry } from './journal.ts';

/**
 * Passive judgement of a gateway's answers (proxy mode): the spec rules that ONE answer can show broken,
 * judged on real traffic. Nothing here replaces `agent-gateway check`, which provokes each case on purpose;
 * an answer that cannot show a rule says nothing about it (no finding is not a pass). The rule ids are the
 * conformance suite's where a check judges the same thing, so a finding here and a failure there read alike.
 */
interface AnswerRule {
  id: string;
  /** The spec sections and rules it enforces (the answers print it with `formatSpecRef`). */
  specRef: SpecRef;
  level: 'MUST' | 'SHOULD';
  title: string;
}

export const ANSWER_RULES = [
  {
    id: 'errors.json-body',
    specRef: [{ section: 7 }],
    level: 'MUST',
    title: 'Every error is JSON (JSON content type) with a string code that matches its status',
  },
  {
    id: 'auth.missing-token',
    specRef: [{ section: 5, rules: [3] }],
    level: 'MUST',
    title: 'A protected endpoint called without a token answers 401 missing_identity_token',
  },
  {
    id: 'auth.invalid-token',
    specRef: [{ section: 5, rules: [3] }],
    level: 'MUST',
    title: 'A 401 for a request that carried a token has code invalid_identity_token',
  },
  {
    id: 'ratelimit.rate-limited-code',
    specRef: [{ section: 8 }],
    level: 'MUST',
    title: 'A 429 has code rate_limited',
  },
  {
    id: 'ratelimit.retry-after-format',
    specRef: [{ section: 8, note: 'RFC 9110 §10.2.3' }],
    level: 'MUST',
    title: 'Retry-After, when present on a 429, is delay-seconds or an HTTP-date',
  },
  {
    id: 'health.without-token',
    specRef: [{ section: 4, rules: [1] }],
    level: 'MUST',
    title: 'GET /v1/health succeeds without any identity token',
  },
  {
    id: 'health.ignores-bad-token',
    specRef: [{ section: 4, rules: [1] }],
    level: 'MUST',
    title: 'GET /v1/health does not refuse a request for the token it carries',
  },
  // The target as a transport (proxy mode only, no check of the suite): recorded by the proxy itself when
  // its deadlines pass or the target switches protocols, never by `judgeAnswer`.
  {
    id: 'target.answers-in-time',
    specRef: [
      { section: 7, note: "5xx: transient failure; the proxy's connect, first byte and idle deadlines" },
    ],
    level: 'SHOULD',
    title: "The target connects, starts its answer and sends its body within the proxy's deadlines",
  },
  {
    id: 'target.no-upgrade',
    specRef: [{ section: 4, note: 'bodies are JSON; RFC 9110 §15.2.2: 101 only to an Upgrade request' }],
    level: 'MUST',
    title: 'The target answers HTTP (no 101 Switching Protocols to a request that asked for no upgrade)',
  },
] as const satisfies readonly AnswerRule[];

type AnswerRuleId = (typeof ANSWER_RULES)[number]['id'];

/** The codes the spec pairs with a status (section 7); other codes are the gateway's own. */
const SPEC_CODES = [
  'missing_identity_token',
  'invalid_identity_token',
  'access_denied',
  'rate_limited',
] as const;
const SPEC_STATUS_OF_CODE: Readonly<Record<string, number>> = Object.fromEntries(
  SPEC_CODES.map((code) => [code, ERROR_CATALOGUE[code].status]),
);
const PROTECTED = new Set<string>(PROTECTED_ENDPOINTS);
const TOOL_FIELD: Readonly<Record<string, string>> = Object.fromEntries(
  TOOL_NAMES.map((tool) => [tool, TOOLS[tool].field]),
);

/** application/json, or any application/*+json (e.g. application/problem+json). */
const isJsonContentType = (value: string | undefined) =>
  /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(value ?? '');

/** One answer as the judge sees it. */
interface JudgedAnswer {
  /** health, whoami, web.search, web.fetch (anything else is not judged). */
  operation: string;
  method: string;
  status: number;
  /** Lower-case names. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The response body as text, when all of it was read (undefined when cut or unread). */
  body: string | undefined;
  /** The identity header: absent, present but blank (either 401 code fits that), or a token. */
  token: 'absent' | 'blank' | 'present';
  /** The request body as text, when all of it was read. */
  requestBody: string | undefined;
}

export interface Finding {
  rule: AnswerRuleId;
  detail: string;
}

const parseJson = (text: string | undefined): unknown => {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** Whether a tool call's body was one the gateway should accept: JSON with its field a non-empty string. */
function wellFormedToolBody(operation: string, body: string | undefined): boolean {
  const field = TOOL_FIELD[operation];
  if (!field) return true;
  const value = parseJson(body) as Record<string, unknown> | undefined;
  return (
    typeof value === 'object' && value !== null && typeof value[field] === 'string' && value[field] !== ''
  );
}

/**
 * The rules this one answer shows broken. Deliberately narrow, so real traffic never yields a false finding:
 * an unauthenticated tool call answered 400/413/415 is a finding only when its body was well-formed (the spec
 * does not order body validation and identity); a 429 to a call without a token is not one (limits may come
 * first); an error body cut short by the journal's size is not judged as a body.
 */
export function judgeAnswer(answer: JudgedAnswer): Finding[] {
  const { operation, status, headers } = answer;
  const findings: Finding[] = [];
  if (operation !== 'health' && !PROTECTED.has(operation)) return findings;
  if (status === 0) return findings;
  const contentType = headers['content-type'];
  const json = status >= 400 ? parseJson(answer.body) : undefined;
  const code =
    typeof json === 'object' && json !== null && !Array.isArray(json)
      ? (json as Record<string, unknown>).code
      : undefined;
  const shown = `${status}${typeof code === 'string' ? ` ${code}` : ''}`;

  if (status >= 400 && answer.body !== undefined) {
    if (!isJsonContentType(contentType))
      findings.push({
        rule: 'errors.json-body',
        detail: `a ${status} error labelled ${contentType ? `"${contentType}"` : 'without a Content-Type'}; expected application/json`,
      });
    else if (typeof json !== 'object' || json === null || Array.isArray(json))
      findings.push({
        rule: 'errors.json-body',
        detail: `a ${status} error whose body is not a JSON object`,
      });
    else if (typeof code !== 'string' || code === '')
      findings.push({
        rule: 'errors.json-body',
        detail: `a ${status} error without a non-empty string "code"`,
      });
    else if (SPEC_STATUS_OF_CODE[code] !== undefined && SPEC_STATUS_OF_CODE[code] !== status)
      findings.push({
        rule: 'errors.json-body',
        detail: `code "${code}" with status ${status}; section 7 pairs it with ${SPEC_STATUS_OF_CODE[code]}`,
      });
  }

  const hadToken = answer.token === 'present';
  if (operation === 'health') {
    const ok = status >= 200 && status < 300;
    if (answer.token === 'absent' && !ok)
      findings.push({
        rule: 'health.without-token',
        detail: `GET /v1/health without a token answered ${shown}`,
      });
    if (answer.token !== 'absent' && status === 401)
      findings.push({
        rule: 'health.ignores-bad-token',
        detail: `GET /v1/health answered ${shown} for the token it carried; health needs no token and must not refuse one`,
      });
    return findings;
  }

  if (!hadToken) {
    const bodyRefusal = status === 400 || status === 413 || status === 415;
    // A blank header is no token, or a token that is not valid: the spec lets either 401 code name it.
    const codes =
      answer.token === 'blank'
        ? ['missing_identity_token', 'invalid_identity_token']
        : ['missing_identity_token'];
    const legal =
      (status === 401 && codes.includes(code as string)) ||
      status === 429 ||
      (bodyRefusal && !wellFormedToolBody(operation, answer.requestBody));
    // A body not read whole cannot tell a legal body refusal from an illegal one.
    const unknownBody = bodyRefusal && TOOL_FIELD[operation] && answer.requestBody === undefined;
    if (!legal && !unknownBody)
      findings.push({
        rule: 'auth.missing-token',
        detail: `${answer.method} without a token answered ${shown}; expected 401 missing_identity_token`,
      });
  } else if (status === 401 && code !== 'invalid_identity_token' && answer.body !== undefined) {
    findings.push({
      rule: 'auth.invalid-token',
      detail: `a request carrying a token answered ${shown}; a refused token is 401 invalid_identity_token`,
    });
  }

  if (status === 429) {
    if (answer.body !== undefined && code !== 'rate_limited')
      findings.push({
        rule: 'ratelimit.rate-limited-code',
        detail: `a 429 with ${typeof code === 'string' ? `code "${code}"` : 'no string code'}; expected rate_limited`,
      });
    const retryAfter = headers['retry-after'];
    if (retryAfter !== undefined && !parseRetryAfter(retryAfter))
      findings.push({
        rule: 'ratelimit.retry-after-format',
        detail: `Retry-After "${retryAfter}" is neither whole seconds nor an HTTP-date`,
      });
  }
  return findings;
}

/** One rule's findings in a journal: how many answers showed it, and the most recent of them. */
export interface RuleFindings extends Omit<AnswerRule, 'specRef'> {
  /** The rule's spec reference as prose, e.g. `§5 rule 3`. */
  specRef: string;
  count: number;
  exchanges: {
    seq: number;
    request_id: string;
    time: string;
    agent?: string;
    method: string;
    path: string;
    status: number;
    code?: string;
    detail: string;
  }[];
}

/** The journal's findings per rule (rules without any left out), each with its last `perRule` exchanges. */
export function findingsOf(entries: readonly JournalEntry[], perRule = 20): RuleFindings[] {
  const byRule = new Map<string, RuleFindings>();
  for (const entry of entries) {
    for (const finding of entry.findings ?? []) {
      const rule = ANSWER_RULES.find((r) => r.id === finding.rule);
      if (!rule) continue;
      let group = byRule.get(rule.id);
      if (!group) {
        group = { ...rule, specRef: formatSpecRef(rule.specRef), count: 0, exchanges: [] };
        byRule.set(rule.id, group);
      }
      group.count += 1;
      group.exchanges.push({
        seq: entry.seq,
        request_id: entry.request_id,
        time: entry.time || new Date(entry.at).toISOString(),
        ...(entry.agent ? { agent: entry.agent } : {}),
        method: entry.method,
        path: entry.path,
        status: entry.status,
        ...(entry.code ? { code: entry.code } : {}),
        detail: finding.detail,
      });
      if (group.exchanges.length > perRule) group.exchanges.shift();
    }
  }
  return ANSWER_RULES.flatMap((r) => byRule.get(r.id) ?? []);
}
