import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { describeNeeding, type SystemBinary } from './system-binary.ts';

/** Debian's Chromium (`apt-get install -y chromium`), or another binary named by AGENT_GATEWAY_CHROMIUM. */
export const CHROMIUM = process.env.AGENT_GATEWAY_CHROMIUM || '/usr/bin/chromium';
const BROWSER: SystemBinary = {
  what: 'Chromium',
  path: CHROMIUM,
  requireEnv: 'AGENT_GATEWAY_REQUIRE_BROWSER',
  install:
    'apt-get update && apt-get install -y chromium (or set AGENT_GATEWAY_CHROMIUM to a Chromium binary)',
};

/** Screenshots the browser tests take: test artefacts under the git-ignored reports/ folder. */
export const SCREENSHOTS = fileURLToPath(new URL('../../reports/screenshots/', import.meta.url));

/**
 * A describe block for tests that drive a real browser. Without Chromium it is skipped, loudly (saying how
 * to install it); with AGENT_GATEWAY_REQUIRE_BROWSER=1 (CI) a missing browser is a failing test instead.
 */
export function describeInBrowser(name: string, body: () => void) {
  describeNeeding(BROWSER, 'browser', name, body);
}

/**
 * Chromium, headless, in a fresh profile, launched from the system binary (never a downloaded browser),
 * with everything that would reach the network at start switched off.
 */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'agent-gateway-chromium-'));
  mkdirSync(SCREENSHOTS, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
