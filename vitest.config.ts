import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'mock-server/**/*.test.ts',
      'conformance/**/*.test.ts',
      'scripts/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    // The consumer examples run in scratch projects against the packed package: npm run test:consumers.
    exclude: ['test/consumers/**', 'node_modules/**', 'dist/**'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
