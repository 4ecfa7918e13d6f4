import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningServer, serve } from '../mock-server/adapters/node-server.ts';
import { createClock } from '../mock-server/clock.ts';
import { createGateway, type Gateway } from '../mock-server/gateway.ts';
import { describeInBrowser, launchBrowser, SCREENSHOTS } from './support/browser.ts';
import { call, search } from './support/call.ts';

const KEY = 'dashboard-browser-key';
// Generous: a loaded 2-core CI machine; every wait is for something the page shows, never a fixed time.
const WAIT = { timeout: 20_000 };

describeInBrowser('the dashboard, in Chromium, against a running gateway', () => {
  let gateway: Gateway;
  let server: RunningServer;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const requested: { url: string; key?: string }[] = [];

  beforeAll(async () => {
    // burst-429 on a frozen clock the test moves: the gateway-clock times are exact, however slow the machine.
    gateway = createGateway({
      adminKey: KEY,
      // An extra tool, which the fault form offers beside the spec's endpoints.
      config: { tools: { 'web.extract': { path: '/v1/web/extract', tiers: ['verified'] } } },
      scenario: 'burst-429',
      clock: createClock({ frozen: true, startAt: Date.parse('2026-05-01T12:00:00.000Z') }),
    });
    server = await serve(gateway, { port: 0 });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('request', (request) =>
      requested.push({ url: request.url(), key: request.headers()['x-admin-key'] }),
    );
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('asks for the key and keeps it out of the URL', async () => {
    await page.goto(`${server.url}/__admin/ui`);
    await page.getByLabel('Admin key').fill('not-the-key-123');
    await page.getByRole('button', { name: 'Open the dashboard' }).click();
    await page.getByText('The gateway refused the key (admin_key_invalid).').waitFor(WAIT);
    await page.getByLabel('Admin key').fill(KEY);
    await page.getByRole('button', { name: 'Open the dashboard' }).click();
    await page.locator('#app').waitFor({ state: 'visible', ...WAIT });
    await page.getByText('burst-429', { exact: true }).first().waitFor(WAIT);
    expect(page.url()).toBe(`${server.url}/__admin/ui`);
    expect(await page.evaluate("sessionStorage.getItem('agent-gateway.admin-key')")).toBe(KEY);
  }, 60_000);

  it('a misbehaving client: the timeline shows the 429 and its Retry-After band, and the violation links to it', async () => {
    const token = gateway.mintToken('agent-verified');
    // Five calls, then the sixth is refused: 5 per 10 s, fixed window, 200 ms apart on the gateway clock.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await search(server.url, token, 'burst')).status);
      gateway.clock.advance(200);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    // The client waits (real time) past the report's grace for requests already in flight, not for Retry-After:
    await new Promise((resolve) => setTimeout(resolve, 300));
    // One second on through the dashboard's own button, then the retry: still 7.8 s early on the gateway clock.
    await page.getByLabel('Advance by').fill('1');
    await page.getByRole('button', { name: 'Advance' }).click();
    await page.locator('#clock-time', { hasText: '2026-05-01T12:00:02.200Z' }).waitFor(WAIT);
    const hostile = '<img src=x onerror="window.__injected=1">';
    expect((await search(server.url, token, hostile)).status).toBe(429);

    // The refusal and its window, drawn in the agent's lane.
    const refusal = page.locator('#timeline [data-agent="agent-verified"] rect.req.s429').first();
    await refusal.waitFor(WAIT);
    const seq = await refusal.getAttribute('data-seq');
    const band = page.locator(`#band-${seq}`);
    await band.waitFor(WAIT);
    expect(await band.getAttribute('class')).toBe('band-429');
    expect(Number(await band.getAttribute('width'))).toBeGreaterThan(50);

    // The client report: honor-retry-after fails, and its first request is that 429.
    const violation = page.locator(
      '#reports [data-agent="agent-verified"] .violation[data-rule="honor-retry-after"]',
    );
    await violation.waitFor(WAIT);
    await expect
      .poll(() => violation.textContent(), WAIT)
      .toMatch(/was sent 1\.2 s after the 429 of #\d+, which asked for 9\.0 s \(Retry-After: 9\)/);
    const link = violation.locator('a.req-link').first();
    expect(await link.getAttribute('href')).toBe(`#req-${seq}`);
    await link.click();
    await page.waitForFunction(
      `document.getElementById('band-${seq}')?.classList.contains('selected')`,
      undefined,
      WAIT,
    );
    expect(await page.locator(`#req-${seq}`).getAttribute('class')).toContain('selected');
    await page
      .locator('#selection', { hasText: `Selected #${seq} POST /v1/web/search -> 429 rate_limited` })
      .waitFor(WAIT);

    // Each rule's quota: remaining plotted, the two refusals marked at 0.
    const rule = page.locator('#limits [data-rule="tool-calls"]');
    await rule.locator('path.quota-line[data-key="agent-verified"]').waitFor(WAIT);
    await expect.poll(() => rule.locator('circle.refused').count(), WAIT).toBe(2);

    // What the agent sent is text: the query shows as written, and no element came of it.
    const retry = page.locator('#timeline rect.req.s429').last();
    expect(await retry.locator('title').textContent()).toContain(hostile);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.evaluate('window.__injected')).toBeUndefined();
  }, 90_000);

  it('arms a fault from the page, and the timeline marks the request it struck', async () => {
    await expect
      .poll(() => page.locator('#fault-operation option').allTextContents(), WAIT)
      .toEqual(['any', 'health', 'whoami', 'web.search', 'web.fetch', 'web.extract']);
    await page.getByLabel('Operation').selectOption('whoami');
    await page.getByLabel('Count').fill('1');
    await page.getByRole('button', { name: 'Arm' }).click();
    await page.locator('#fault-list [data-fault="fault-1"]').waitFor(WAIT);
    const struck = await call(server.url, 'GET', '/v1/whoami', { token: gateway.mintToken('agent-early') });
    expect([struck.status, struck.body.code]).toEqual([503, 'upstream_unavailable']);
    await page.locator('#timeline [data-agent="agent-early"] path.fault-mark').waitFor(WAIT);
    await page.locator('#fault-list', { hasText: 'No fault armed.' }).waitFor(WAIT);
    await page.locator('#report-agent-early summary').waitFor(WAIT);
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard.png'), fullPage: true });
  }, 60_000);

  it('shows one exchange in full, redacted, and sets and freezes the clock in one step from a shared link', async () => {
    const token = gateway.mintToken('agent-verified');
    gateway.clock.advance(20_000);
    expect((await search(server.url, token, 'exchange in full')).status).toBe(200);
    const mark = page.locator('#timeline rect.req.s2xx', { hasText: 'exchange in full' });
    await mark.waitFor(WAIT);
    await mark.click();
    const request = page.locator('#exchange-request');
    await request.filter({ hasText: 'exchange in full' }).waitFor(WAIT);
    const shown = (await request.textContent()) ?? '';
    expect(shown).toMatch(/^POST \/v1\/web\/search HTTP\/1\.1/);
    expect(shown).toMatch(/x-agent-identity: \[REDACTED:tok_[0-9a-f]{8}\]/i);
    expect(shown).not.toContain(token);
    expect(await page.locator('#exchange-response').textContent()).toMatch(/^200\n[\s\S]*"results"/);

    // A link to the clock form, as QA shares it: a key put in it is dropped, never read.
    await page.goto(`${server.url}/__admin/ui#clock-set?time=2026-07-01T00:00:00Z&frozen=1&key=${KEY}`);
    await page.locator('#app').waitFor({ state: 'visible', ...WAIT });
    expect(page.url()).not.toContain(KEY);
    expect(await page.locator('#clock-set-time').inputValue()).toBe('2026-07-01T00:00:00Z');
    await page.getByRole('button', { name: 'Set', exact: true }).click();
    await page.locator('#clock-time', { hasText: '2026-07-01T00:00:00.000Z' }).waitFor(WAIT);
    expect(gateway.clock.frozen).toBe(true);
    expect(gateway.clock.now()).toBe(Date.parse('2026-07-01T00:00:00Z'));
  }, 90_000);

  it('setting the clock into its past from the page starts an epoch: the axis shows dates, the page says so', async () => {
    await page.locator('#clock-set-time').fill('2026-01-01T00:00:00Z');
    await page.getByRole('button', { name: 'Set', exact: true }).click();
    await page.locator('#clock-state', { hasText: 'epoch 1' }).waitFor(WAIT);
    expect(gateway.clock.epoch).toBe(1);
    const token = gateway.mintToken('agent-verified');
    expect((await search(server.url, token, 'after the clock moved back')).status).toBe(200);
    await page
      .locator('#epoch-note', { hasText: 'clock epochs 0, 1' })
      .waitFor({ state: 'visible', ...WAIT });
    // The agent's report says where the epoch began (each epoch is judged apart).
    await page.locator('#report-agent-verified p.epoch', { hasText: 'Clock epoch 1 began' }).waitFor(WAIT);
    // The requests span four months of gateway-clock time: the axis is labelled with dates, not times of day.
    const labels = await page.locator('#timeline > text').allTextContents();
    expect(labels.length).toBeGreaterThan(1);
    for (const label of labels) expect(label).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d$/);
  }, 60_000);

  it('every data call sends the key in X-Admin-Key; no URL ever carries it', () => {
    expect(requested.length).toBeGreaterThan(10);
    // The one URL with the key is the test's own navigation to a link carrying it, which the page drops.
    expect(requested.filter((r) => r.url.includes(KEY) && !r.url.includes('#clock-set'))).toEqual([]);
    const data = requested.filter(
      (r) =>
        new URL(r.url).pathname.startsWith('/__admin/') && !new URL(r.url).pathname.startsWith('/__admin/ui'),
    );
    expect(data.length).toBeGreaterThan(5);
    expect(data.filter((r) => r.key !== KEY && r.key !== 'not-the-key-123')).toEqual([]);
  });
});
