// The esbuild options of every bundle of the CLI (dist/cli for the package, one file for the Python
// package's gateway): what differs between them is only where they go and whether they split.
export const CLI_BUNDLE_OPTIONS = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  // Names stay (readable stack traces); whitespace and syntax go (less to parse at start).
  minifyWhitespace: true,
  minifySyntax: true,
  // No source maps here: they would carry every dependency (4 MB); the library's maps cover our code.
  sourcemap: false,
  // commander is CommonJS: its require() calls of node: modules need a require in an ES module.
  banner: {
    js: "import { createRequire as __agentGatewayRequire } from 'node:module'; const require = __agentGatewayRequire(import.meta.url);",
  },
  logLevel: 'warning',
};
