import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Handler } from '../http/context.ts';
import { respondText } from '../http/respond.ts';
import type { Router } from '../routes/router.ts';

/** Where the dashboard is served: the page, and its assets beside it. */
export const DASHBOARD_PATH = '/__admin/ui';

// The same code runs from three places: the sources (mock-server/dashboard/), the built library
// (dist/mock-server/dashboard/, where dev/build.mjs copies assets/ beside it) and the CLI bundle
// (dist/cli/, one chunk for many modules), which finds them in the library's copy.
const CANDIDATES = ['./assets/', '../mock-server/dashboard/assets/'].map((relative) =>
  fileURLToPath(new URL(relative, import.meta.url)),
);

/** The dashboard's folder: found from the sources, the built library and the CLI bundle alike. */
export const ASSETS_DIR: string =
  CANDIDATES.find((dir) => existsSync(join(dir, 'index.html'))) ??
  // Neither: keep the first, so the error that follows names a real place to look.
  (CANDIDATES[0] as string);

const ASSETS: Record<string, { file: string; type: string }> = {
  [DASHBOARD_PATH]: { file: 'index.html', type: 'text/html; charset=utf-8' },
  [`${DASHBOARD_PATH}/`]: { file: 'index.html', type: 'text/html; charset=utf-8' },
  [`${DASHBOARD_PATH}/dashboard.js`]: { file: 'dashboard.js', type: 'text/javascript; charset=utf-8' },
  [`${DASHBOARD_PATH}/dashboard.css`]: { file: 'dashboard.css', type: 'text/css; charset=utf-8' },
};

/**
 * What the page may do: its own script and style, and calls to this gateway; no inline script, no other
 * origin, no framing, no form submission (the key never travels in a URL or a form).
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

/**
 * Whether a request is for one of the dashboard's static files: exactly these paths, with GET or HEAD. The
 * core lets exactly these through without the admin key (the page asks for the key itself and sends it on
 * every data call); every other admin path, under /__admin/ui too, still needs it.
 */
export function isDashboardAsset(method: string, path: string): boolean {
  return (method === 'GET' || method === 'HEAD') && Object.hasOwn(ASSETS, path);
}

/** The dashboard's files, read once (they are small, and the package ships them). */
export function loadDashboardAssets(dir: string = ASSETS_DIR): Map<string, { body: string; type: string }> {
  const loaded = new Map<string, { body: string; type: string }>();
  for (const [path, { file, type }] of Object.entries(ASSETS)) {
    const where = join(dir, file);
    if (!existsSync(where))
      throw new Error(`The dashboard's ${file} is missing from ${dir}: rebuild the package.`);
    loaded.set(path, { body: readFileSync(where, 'utf8'), type });
  }
  return loaded;
}

/**
 * The live dashboard at /__admin/ui (registered with the admin API): a page that reads the admin API with
 * the key the user types, served with a strict Content-Security-Policy and `nosniff`.
 */
export function registerDashboardRoutes(router: Router) {
  const assets = loadDashboardAssets();
  for (const [path, asset] of assets) {
    const handler: Handler = (ctx) => respondText(ctx, asset.body, asset.type, SECURITY_HEADERS);
    router.add('GET', path, handler);
  }
}
