import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * The README's in-process examples are the files the consumer tests run against the packed package
 * (`npm run test:consumers`): quoted whole, so what a reader copies is what was proven to work.
 */
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const example = (path: string) =>
  readFileSync(new URL(`consumers/${path}`, import.meta.url), 'utf8').trimEnd();

describe('README examples', () => {
  for (const [path, language] of [
    ['vitest-project/agent.test.ts', 'ts'],
    ['jest-project/agent.test.ts', 'ts'],
    ['jest-project/jest.config.mjs', 'js'],
    ['jest-project/tsconfig.json', 'json'],
    ['esm/serve.mjs', 'js'],
  ] as const) {
    it(`quotes test/consumers/${path} as it is`, () => {
      expect(readme).toContain(`\`\`\`${language}\n${example(path)}\n\`\`\``);
    });
  }
});
