#!/usr/bin/env node
// The `agent-gateway` command. The project is TypeScript run as-is: tsx compiles it on load, so a clone
// works right after `npm install`, with no build step.
import { register } from 'tsx/esm/api';

register();
await import('./cli.ts');
