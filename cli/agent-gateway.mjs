#!/usr/bin/env node
// The `agent-gateway` command (package.json "bin"). Two places run it:
// - a clone of the repository, where cli/cli.ts sits beside this file: the sources, compiled on load
//   by tsx, so an edited file takes effect at once (`npm start`, `npx agent-gateway` in the checkout);
// - the installed package, which ships dist/ and not the sources: the bundled CLI in dist/cli/, which
//   starts several times faster (`npm run bench:cli`).
import { existsSync } from 'node:fs';
import module from 'node:module';

// Node 22.1+ keeps compiled code between runs (a no-op where it does not exist, as on Node 20).
module.enableCompileCache?.();

if (existsSync(new URL('./cli.ts', import.meta.url))) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./cli.ts');
} else {
  await import('../dist/cli/agent-gateway.js');
}
