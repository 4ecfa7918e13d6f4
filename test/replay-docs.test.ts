import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../mock-server/gateway.ts';
import { search } from './support/call.ts';

/*
 * docs/qa.md's replay example (issue 36, point 4): the guide quotes docs/examples/replay-incident.yaml as it
 * is, and serving it answers the searches the way the guide's curl run shows.
 */

const file = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const EXAMPLE = 'docs/examples/replay-incident.yaml';
const guide = readFileSync(file('docs/qa.md'), 'utf8');

describe("the QA guide's replay example", () => {
  it('quotes the example scenario file as it is', () => {
    expect(guide).toContain(`\`\`\`yaml\n${readFileSync(file(EXAMPLE), 'utf8').trimEnd()}\n\`\`\``);
  });

  it('serving it answers the way the guide shows', async () => {
    // The guide's curl run: the loop, then one line per search as `STATUS retry-after=V ratelimit=V`.
    const run = guide.slice(guide.indexOf(`serve --scenario ${EXAMPLE}`));
    const shown = [...run.matchAll(/^(\d{3}) retry-after=(\S*) ratelimit=(\S*)$/gm)].slice(0, 5);
    expect(shown).toHaveLength(5);
    const gateway = createGateway({ scenario: file(EXAMPLE) });
    const token = gateway.mintToken('agent-verified');
    for (const [, status, retryAfter, rateLimit] of shown) {
      const answer = await search(gateway, token, 'lisbon');
      expect([
        String(answer.status),
        answer.headers.get('retry-after') ?? '',
        answer.headers.get('ratelimit') ?? '',
      ]).toEqual([status, retryAfter, rateLimit]);
    }
  });
});
