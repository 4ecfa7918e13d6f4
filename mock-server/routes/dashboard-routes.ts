import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Handler } from '../http/context.ts';
import { respondText } from '../http/respond.ts';
import { DASHBOARD_ROUTES } from './admin-route-table.ts';
import type { Routes } from './route-declaration.ts';

// The same code runs from three places: the sources (mock-server/dashboard/), the built library
// (dist/mock-server/dashboard/, where dev/build.mjs copies assets/ beside it) and the CLI bundle
// (dist/cli/, one chunk for many modules), which finds them in the library's copy.
const CANDIDATES = ['../dashboard/assets/', '../mock-server/dashboard/assets/'].map((relative) =>
  fileURLToPath(new URL(relative, import.meta.url)),
);

/** The dashboard's folder: found from the sources, the built library and the CLI bundle alike. */
const ASSETS_DIR: string =
  CANDIDATES.find((dir) => existsSync(join(dir, 'index.html'))) ??
  // Neither: keep the first, so the error that follows names a real place to look.
  (CANDIDATES[0] as string);

/** The file each of the dashboard's routes serves (the paths and media types are in the route table). */
const FILES: Record<string, string> = {
  dashboard: 'index.html',
  dashboardSlash: 'index.html',
  dashboardScript: 'dashboard.js',
  dashboardStyle: 'dashboard.css',
};
const ASSET_PATHS = new Set(DASHBOARD_ROUTES.map((route) => route.path));

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
  return (method === 'GET' || method === 'HEAD') && ASSET_PATHS.has(path);
}

/** The dashboard's files by route id, read once (they are small, and the package ships them). */
function loadDashboardAssets(dir: string = ASSETS_DIR): Map<string, { body: string; type: string }> {
  const loaded = new Map<string, { body: string; type: string }>();
  for (const route of DASHBOARD_ROUTES) {
    const file = FILES[route.id] as string;
    const where = join(dir, file);
    if (!existsSync(where))
      throw new Error(`The dashboard's ${file} is missing from ${dir}: rebuild the package.`);
    const type = `${route.ok.text?.[0]}; charset=utf-8`;
    loaded.set(route.id, { body: readFileSync(where, 'utf8'), type });
  }
  return loaded;
}

/**
 * The live dashboard at /__admin/ui (served with the admin API): a page that reads the admin API with the
 * key the user types, served with a strict Content-Security-Policy and `nosniff`.
 */
export function registerDashboardRoutes(routes: Routes) {
  const assets = loadDashboardAssets();
  for (const [id, asset] of assets) {
    const handler: Handler = (ctx) => respondText(ctx, asset.body, asset.type, SECURITY_HEADERS);
    routes.bind(id, handler);
  }
}
