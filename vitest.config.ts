import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'vocabulary/**/*.test.ts',
      'mock-server/**/*.test.ts',
      'conformance/**/*.test.ts',
      'cli/**/*.test.ts',
      'dev/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    // The consumer examples run in scratch projects against the packed package: npm run test:consumers.
    exclude: ['test/consumers/**', 'node_modules/**', 'dist/**'],
    // The CLI bundled once for the run: the tests that start `agent-gateway` processes run it rather
    // than the sources through tsx (dev/test-cli-bundle.mjs).
    globalSetup: ['dev/test-cli-bundle.mjs'],
    // Most test files wait on child processes and sockets (gateways, the CLI, the conformance suite), so
    // two files at a time on a 2-core machine halve the wall time (measured: 458 s -> 305 s, CPU use about
    // one core) where vitest's default (cores - 1) would run one.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
