import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createClock } from '../mock-server/clock.ts';
import { createGateway } from '../mock-server/gateway.ts';
import type { JournalEntry } from '../mock-server/journal/journal.ts';
import { DASHBOARD_CSP } from '../mock-server/routes/dashboard-routes.ts';
import { call, search } from './support/call.ts';

const KEY = 'dashboard-admin-key';
const ASSETS: [string, string][] = [
  ['/__admin/ui', 'text/html; charset=utf-8'],
  ['/__admin/ui/', 'text/html; charset=utf-8'],
  ['/__admin/ui/dashboard.js', 'text/javascript; charset=utf-8'],
  ['/__admin/ui/dashboard.css', 'text/css; charset=utf-8'],
];

describe('the dashboard at /__admin/ui', () => {
  const gateway = createGateway({
    adminKey: KEY,
    clock: createClock({ frozen: true, startAt: Date.parse('2026-05-01T12:00:00Z') }),
  });

  it('its page and assets load without the key, with a strict CSP and nosniff, and are not journaled', async () => {
    for (const [path, type] of ASSETS) {
      for (const method of ['GET', 'HEAD']) {
        const response = await gateway.fetch(new Request(`http://gw.test${path}`, { method }));
        expect([path, method, response.status, response.headers.get('content-type')]).toEqual([
          path,
          method,
          200,
          type,
        ]);
        expect(response.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
        expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      }
    }
    expect(DASHBOARD_CSP).toMatch(/default-src 'none'; script-src 'self';/);
    expect(DASHBOARD_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(gateway.journal.list()).toEqual([]);
  });

  it('every other admin path still needs the key, under /__admin/ui and its near misses too', async () => {
    const index = await call(gateway, 'GET', '/__admin', { headers: { 'x-admin-key': KEY } });
    // The admin API's own list of endpoints, each with its parameters filled in.
    const listed = (index.body.endpoints as string[]).flatMap((line) => {
      const [method, path = ''] = line.trim().split(/\s+/);
      const base = path
        .replace(/\[.*\]$/, '')
        .replace(/:\w+/g, 'x')
        .replace(/\?.*$/, '');
      const extra = [...line.matchAll(/\| (\/\w+)/g)].map((m) => `${base.replace(/\/\w+$/, '')}${m[1]}`);
      return [base, ...extra].map((p) => [method as string, p] as const);
    });
    expect(listed.length).toBeGreaterThan(20);
    const nearMisses = [
      ['POST', '/__admin/ui'],
      ['PUT', '/__admin/ui/dashboard.js'],
      ['GET', '/__admin/ui/index.html'],
      ['GET', '/__admin/ui/other.js'],
      ['GET', '/__admin/ui/dashboard.js/'],
      ['GET', '/__admin/ui/../agents'],
      ['GET', '/__admin/uix'],
      ['GET', '/__admin/ui%2Fdashboard.js'],
      ['GET', '/__admin/UI'],
    ] as const;
    const ui = new Set(ASSETS.map(([path]) => path));
    for (const [method, path] of [...listed, ...nearMisses]) {
      if (method === 'GET' && ui.has(path)) continue;
      const response = await call(gateway, method, path);
      expect([method, path, response.status, response.body.code]).toEqual([
        method,
        path,
        401,
        'admin_key_required',
      ]);
    }
  });

  it('is not there without an admin key (404, like the rest of /__admin)', async () => {
    const plain = createGateway();
    for (const [path] of ASSETS) expect((await call(plain, 'GET', path)).status).toBe(404);
  });

  it('the page sets what agents sent as text, never as markup, and loads nothing from elsewhere', () => {
    const script = readFileSync(
      new URL('../mock-server/dashboard/assets/dashboard.js', import.meta.url),
      'utf8',
    );
    expect(script).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/,
    );
    const page = readFileSync(new URL('../mock-server/dashboard/assets/index.html', import.meta.url), 'utf8');
    expect(page).not.toMatch(/<script>|<style>|\bon[a-z]+=|https?:\/\/(?!www\.w3\.org)/);
    expect(page).toContain('<script type="module" src="/__admin/ui/dashboard.js"></script>');
    // The key input has no name: a form submitted without the script could not carry it into a URL.
    expect(page).toMatch(/<input type="password" id="key-input" autocomplete="current-password" required>/);
  });
});

describe("the journal's quota: each rule's remaining requests, as the dashboard plots them", () => {
  it('counts down per request and is 0 on the refusal, with the rule that refused it', async () => {
    const gateway = createGateway({
      scenario: 'burst-429',
      clock: createClock({ frozen: true, startAt: Date.parse('2026-05-01T12:00:00Z') }),
    });
    const token = gateway.mintToken('agent-verified');
    for (let i = 0; i < 6; i++) await search(gateway, token, 'burst');
    await call(gateway, 'GET', '/v1/whoami', { token });
    const entries = gateway.journal.list() as JournalEntry[];
    expect(
      entries.map((e) => [e.status, e.quota?.map((q) => `${q.rule} ${q.key} ${q.remaining}/${q.limit}`)]),
    ).toEqual([
      [200, ['tool-calls agent-verified 4/5']],
      [200, ['tool-calls agent-verified 3/5']],
      [200, ['tool-calls agent-verified 2/5']],
      [200, ['tool-calls agent-verified 1/5']],
      [200, ['tool-calls agent-verified 0/5']],
      [429, ['tool-calls agent-verified 0/5']],
      // burst-429 limits tool calls only: whoami is counted by no rule.
      [200, undefined],
    ]);
    expect(entries[5]?.limit).toEqual({ rule: 'tool-calls', scope: 'agent', key: 'agent-verified' });
  });
});
