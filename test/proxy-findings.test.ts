import { describe, expect, it } from 'vitest';
import { serve } from '../mock-server/adapters/node-server.ts';
import type { RuleFindings } from '../mock-server/journal/answer-findings.ts';
import { createProxy } from '../mock-server/proxy/proxy.ts';
import { FAULTY_GATEWAYS } from './gateways/faulty-gateways.ts';
import type { ProofTarget, RunningTarget } from './gateways/proof-target.ts';
import { VALID_VARIANTS } from './gateways/valid-variants.ts';
import { virtualClock } from './gateways/virtual-clock.ts';

/*
 * The proxy in front of the proof catalogue's gateways (test/gateways/): the same ordinary traffic (what
 * agents meet: health, calls without a token or with a bad one, a bad body, a burst) goes through the proxy
 * to each. A faulty gateway whose broken rule one answer can show is listed under that rule; a valid variant
 * (the unusual legal ways: problem+json, HTTP-date Retry-After, 429 before identity, bodies validated first,
 * blank token called invalid, ...) yields no finding at all.
 */

const ADMIN = 'proxy-findings-admin-key';

/** Faulty gateways and the finding their answers to the traffic below must show. */
const EXPECTED: Record<string, string> = {
  'health-requires-token': 'health.without-token',
  'health-rejects-bad-token': 'health.ignores-bad-token',
  'missing-token-wrong-code': 'auth.missing-token',
  'missing-token-403': 'auth.missing-token',
  'missing-token-as-400': 'auth.missing-token',
  'unauthenticated-body-crash': 'auth.missing-token',
  'invalid-token-as-missing': 'auth.invalid-token',
  'errors-as-text': 'errors.json-body',
  'errors-wrong-content-type': 'errors.json-body',
  'code-status-mismatch': 'errors.json-body',
  'rate-limit-wrong-code': 'ratelimit.rate-limited-code',
  'rate-limit-not-json': 'errors.json-body',
  'retry-after-malformed': 'ratelimit.retry-after-format',
};

/** Ordinary traffic, bounded: 9 single requests and a burst. */
async function traffic(base: string, target: RunningTarget): Promise<void> {
  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    fetch(`${base}${path}`, { method, headers, body }).then((r) => r.arrayBuffer());
  const json = { 'content-type': 'application/json' };
  await send('GET', '/v1/health');
  await send('GET', '/v1/health', { 'x-agent-identity': 'garbage.token.value' });
  await send('GET', '/v1/whoami');
  await send('GET', '/v1/whoami', { 'x-agent-identity': '' });
  await send('POST', '/v1/web/search', json, '{"query":"agent gateway"}');
  await send('POST', '/v1/web/search', json, '{"query":');
  await send('GET', '/v1/whoami', { 'x-agent-identity': 'garbage.token.value' });
  await send('POST', '/v1/web/fetch', { ...json, 'x-agent-identity': target.token }, '{"url":5}');
  await send('GET', '/v1/whoami', { 'x-agent-identity': target.token });
  // A burst, in batches until the gateway limits it (a 429), at most 400 requests: the proof gateways allow
  // 60 a second, on a virtual clock that nothing here moves, so the limit is met however slow the machine.
  for (let batch = 0; batch < 10; batch++) {
    const statuses = await Promise.all(
      Array.from({ length: 40 }, () =>
        fetch(`${base}/v1/whoami`, { headers: { 'x-agent-identity': target.token } }).then(async (r) => {
          await r.arrayBuffer();
          return r.status;
        }),
      ),
    );
    if (statuses.includes(429)) break;
  }
}

async function findingsThroughProxy(
  gateway: ProofTarget,
): Promise<{ judged: number; rules: RuleFindings[] }> {
  // On a virtual clock that stands still: a limit, once spent, stays spent (no refill with real time).
  const target = await gateway.start({ clock: virtualClock() });
  const proxy = createProxy({ target: target.baseUrl, adminKey: ADMIN, log: () => {} });
  const server = await serve(proxy, { port: 0, log: () => {} });
  try {
    await traffic(server.url, target);
    const answer = await fetch(`${server.url}/__admin/findings`, { headers: { 'x-admin-key': ADMIN } });
    return (await answer.json()) as { judged: number; rules: RuleFindings[] };
  } finally {
    await server.close();
    proxy.close();
    await target.close();
  }
}

const describeFindings = (rules: RuleFindings[]) =>
  rules
    .map((r) => `${r.id}: ${r.exchanges.map((x) => `${x.method} ${x.path} -> ${x.detail}`).join('; ')}`)
    .join('\n');

describe('findings of the proxy in front of the proof catalogue', () => {
  for (const gateway of FAULTY_GATEWAYS.filter((g) => EXPECTED[g.id])) {
    it(`lists ${EXPECTED[gateway.id]} for ${gateway.id} (${gateway.description})`, async () => {
      const { rules } = await findingsThroughProxy(gateway);
      expect(
        rules.map((r) => r.id),
        describeFindings(rules),
      ).toContain(EXPECTED[gateway.id]);
      const rule = rules.find((r) => r.id === EXPECTED[gateway.id]) as RuleFindings;
      // Each finding names the exchange that shows it.
      expect(rule.exchanges[0]?.request_id).toBeTypeOf('string');
      expect(rule.exchanges[0]?.detail.length).toBeGreaterThan(10);
    }, 60_000);
  }

  for (const gateway of VALID_VARIANTS) {
    it(`lists nothing for the valid ${gateway.id} (${gateway.description})`, async () => {
      const { judged, rules } = await findingsThroughProxy(gateway);
      expect(rules, describeFindings(rules)).toEqual([]);
      // Nothing found is worth something only if answers were judged.
      expect(judged).toBeGreaterThanOrEqual(9);
    }, 60_000);
  }

  it('expects every faulty gateway it names to exist', () => {
    const ids = new Set(FAULTY_GATEWAYS.map((g) => g.id));
    for (const id of Object.keys(EXPECTED)) expect(ids, id).toContain(id);
  });
});
