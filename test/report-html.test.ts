import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULTY_GATEWAYS } from './gateways/faulty-gateways.ts';
import type { RunningTarget } from './gateways/proof-target.ts';
import { describeInBrowser, launchBrowser, SCREENSHOTS } from './support/browser.ts';
import { runCli } from './support/cli.ts';

const WAIT = { timeout: 20_000 };
const dir = mkdtempSync(join(tmpdir(), 'report-html-'));
const html = join(dir, 'conformance.html');
const json = join(dir, 'conformance.json');

// One failing run, shared: a gateway that crashes (500) on identity tokens over 1,000 characters.
let run: Promise<{ code: number; stdout: string; stderr: string }> | undefined;
function failingRun() {
  run ??= (async () => {
    const target = (await FAULTY_GATEWAYS.find((g) => g.id === 'long-token-crash')?.start()) as RunningTarget;
    try {
      return await runCli([
        'check',
        ...['--base-url', target.baseUrl, '--token', target.token, '--denied-token', target.deniedToken],
        ...['--only', 'health.without-token,auth.invalid-token', '--seed', '11', '--num-runs', '20'],
        ...['--report-html', html, '--report-json', json],
      ]);
    } finally {
      await target.close();
    }
  })();
  return run;
}

describe('check --report-html', () => {
  it('writes the HTML report of a failing run, and the JSON report gains the failing exchange (a new field only)', async () => {
    const result = await failingRun();
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    const failed = report.checks.find((c: { id: string }) => c.id === 'auth.invalid-token');
    expect(Object.keys(failed)).toEqual([
      'id',
      'title',
      'spec_ref',
      'level',
      'verdict',
      'unobserved',
      'remedy',
      'blocking',
      'enabled_by',
      'message',
      'reproduction',
      'duration_ms',
      'requests',
      'shared_with',
    ]);
    expect(failed.reproduction.exchange.response.status).toBe(500);
    expect(failed.reproduction.exchange.request.headers).toContainEqual([
      'X-Agent-Identity',
      expect.any(String),
    ]);
    expect(failed.reproduction.exchange.request.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\//);
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('<article class="failure" id="check-auth.invalid-token">');
    expect(page).toContain(`<dt>seed</dt><dd><code>11</code>`);
  }, 90_000);
});

describeInBrowser('the HTML report, in Chromium', () => {
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 60_000);
  afterAll(() => browser?.close());

  it('shows the verdicts by section, and the failure with its exchange, curl and replay command', async () => {
    expect((await failingRun()).code).toBe(1);
    const page = await browser.context.newPage();
    const blocked: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith('file:')) blocked.push(request.url());
    });
    await page.goto(pathToFileURL(html).href);
    await page.getByRole('heading', { name: 'Agent Tool Gateway conformance: failed' }).waitFor(WAIT);
    const row = page.locator('tr.fail', { hasText: 'auth.invalid-token' });
    await row.waitFor(WAIT);
    expect(await page.locator('#section-5').textContent()).toBe('§5 Authentication');
    await row.getByRole('link', { name: 'auth.invalid-token' }).click();
    const failure = page.locator('article#check-auth\\.invalid-token');
    await failure.waitFor(WAIT);
    expect(await failure.locator('pre.message').textContent()).toMatch(
      /^\[(long|oversized)@(whoami|web\.search|web\.fetch)\] Expected /,
    );
    expect(await failure.locator('pre.response').textContent()).toMatch(/^HTTP 500\n/);
    expect(await failure.locator('pre.request').textContent()).toMatch(
      /^(GET|POST) http:\/\/127\.0\.0\.1:\d+\/v1\//,
    );
    expect(await failure.locator('pre.curl').textContent()).toMatch(
      /^curl -sS -i -X (GET|POST) 'http:\/\/127\.0\.0\.1:\d+\/v1\//,
    );
    expect(await failure.locator('pre.replay').textContent()).toMatch(
      /--only auth\.invalid-token --seed 11 --path /,
    );
    expect(await failure.isVisible()).toBe(true);
    // Self-contained: nothing was fetched from anywhere.
    expect(blocked).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'conformance-report.png'), fullPage: true });
  }, 90_000);
});
