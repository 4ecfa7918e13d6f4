import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The README and the guides link to each other by file and heading: a moved or renamed section must not
 * leave a link pointing nowhere. Anchors are GitHub's: the heading lower-cased, punctuation dropped,
 * spaces as dashes.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

const slug = (heading: string) =>
  heading
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function withoutCode(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

function anchorsOf(path: string): Set<string> {
  const text = withoutCode(readFileSync(join(root, path), 'utf8'));
  const anchors = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) anchors.add(slug(m[1] ?? ''));
  return anchors;
}

function linksOf(path: string): string[] {
  const text = withoutCode(readFileSync(join(root, path), 'utf8'));
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '').filter((l) => !/^[a-z]+:/i.test(l));
}

describe('links between the README and the guides', () => {
  it('finds the guides a reader is sent to', () => {
    for (const guide of ['agent-developers', 'gateway-implementers', 'qa', 'operators', 'reference'])
      expect(docs).toContain(`docs/${guide}.md`);
  });

  for (const from of docs)
    it(`every relative link in ${from} reaches a file, and a heading where it names one`, () => {
      const broken: string[] = [];
      for (const link of linksOf(from)) {
        const [file = '', anchor] = link.split('#');
        const target = file === '' ? from : relative(root, join(root, dirname(from), file));
        if (!existsSync(join(root, target))) broken.push(`${link} (no file ${target})`);
        else if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).has(anchor))
          broken.push(`${link} (no heading #${anchor} in ${target})`);
      }
      expect(broken).toEqual([]);
    });
});
