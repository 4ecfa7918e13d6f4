import { defineConfig } from 'vitest/config';
import SlowFirstSequencer, { workersNow } from './dev/test-schedule.ts';

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
    // Property tests run on a fixed seed plus the corpus of counterexamples (test/support/property.ts).
    setupFiles: ['test/support/property-setup.ts'],
    // The CLI bundled once for the run: the tests that start `agent-gateway` processes run it rather
    // than the sources through tsx (dev/test-cli-bundle.mjs).
    globalSetup: ['dev/test-cli-bundle.mjs'],
    // Most test files wait on child processes, sockets and rate windows rather than compute: on a quiet
    // machine twice as many files as cores run at once, on a busy one cores - 1 (at least 2); the files
    // that take minutes start first (dev/test-schedule.ts).
    maxWorkers: workersNow(),
    sequence: { sequencer: SlowFirstSequencer },
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
