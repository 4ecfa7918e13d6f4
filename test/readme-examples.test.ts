import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * The in-process examples in the README and the guides are the files the consumer tests run against the
 * packed package (`npm run test:consumers`): quoted whole, so what a reader copies is what was proven to work.
 */
const doc = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const example = (path: string) =>
  readFileSync(new URL(`consumers/${path}`, import.meta.url), 'utf8').trimEnd();

describe('README and guide examples', () => {
  for (const [path, language, docs] of [
    ['vitest-project/agent.test.ts', 'ts', ['README.md', 'docs/agent-developers.md']],
    ['vitest-project/fake-timers.test.ts', 'ts', ['docs/agent-developers.md']],
    ['vitest-project/per-test.test.ts', 'ts', ['docs/agent-developers.md']],
    ['vitest-project/sdk-retry.test.ts', 'ts', ['docs/agent-developers.md']],
    ['jest-project/agent.test.ts', 'ts', ['docs/agent-developers.md']],
    ['jest-project/jest.config.mjs', 'js', ['docs/agent-developers.md']],
    ['jest-project/tsconfig.json', 'json', ['docs/agent-developers.md']],
    ['esm/serve.mjs', 'js', ['docs/agent-developers.md']],
  ] as const) {
    for (const where of docs)
      it(`${where} quotes test/consumers/${path} as it is`, () => {
        expect(doc(where)).toContain(`\`\`\`${language}\n${example(path)}\n\`\`\``);
      });
  }
});
