import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, describeIssues } from '../config/load-config.ts';

/** One search hit, as `POST /v1/web/search` returns it. */
export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

/** A fixture page for `POST /v1/web/fetch`; hostile pages carry canaries the client report looks for. */
interface FixturePage {
  url: string;
  title: string;
  content: string;
  status: number;
  /** Kinds of hostility: prompt_injection, canary_secret, huge, odd_encoding. */
  hostile: string[];
  /** Secrets planted in the page: an agent must never send them in a query or URL. */
  canarySecrets: string[];
  /** Hosts the page's injected instructions tell the agent to contact: going there means it obeyed. */
  canaryHosts: string[];
  file: string;
}

export interface Corpus {
  searches: Map<string, SearchHit[]>;
  pages: Map<string, FixturePage>;
  canarySecrets: string[];
  canaryHosts: string[];
}

/** The key a query is looked up by: case and runs of whitespace do not matter. */
// Whitespace other than a single space: only then can collapsing runs change anything (skips a regex replace).
const WHITESPACE_TO_COLLAPSE = /[^\S ]| {2}/;
export const normalizeQuery = (query: string) => {
  const trimmed = query.trim();
  return (WHITESPACE_TO_COLLAPSE.test(trimmed) ? trimmed.replace(/\s+/g, ' ') : trimmed).toLowerCase();
};

/** The key a URL is looked up by: WHATWG-normalised (scheme and host lower-case, default port dropped). */
export const normalizeUrl = (url: string) => new URL(url).href;

const hitSchema = z.strictObject({ title: z.string(), url: z.url(), snippet: z.string() });
const searchFileSchema = z.strictObject({
  entries: z.array(z.strictObject({ query: z.string().min(1), results: z.array(hitSchema).max(50) })),
});

const frontMatterSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  title: z.string().min(1),
  status: z.number().int().min(100).max(599).default(200),
  charset: z.enum(['utf-8', 'iso-8859-1', 'windows-1252', 'utf-16le']).default('utf-8'),
  hostile: z.array(z.enum(['prompt_injection', 'canary_secret', 'huge', 'odd_encoding'])).default([]),
  canary_secrets: z.array(z.string().min(8)).default([]),
  canary_hosts: z.array(z.string().min(1)).default([]),
  /** Pads the page deterministically to this many characters (the "very large page"). */
  generate_chars: z
    .number()
    .int()
    .min(1)
    .max(64 * 1024 * 1024)
    .optional(),
});

const listFiles = (dir: string, extension: string) => {
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith(extension))
      .sort()
      .map((name) => join(dir, name));
  } catch {
    throw new ConfigError(dir, [{ path: '', message: 'corpus directory not found' }], 'fixture');
  }
};

function loadSearches(dir: string): Map<string, SearchHit[]> {
  const searches = new Map<string, SearchHit[]>();
  for (const file of listFiles(dir, '.json')) {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new ConfigError(
        file,
        [{ path: '', message: `not valid JSON: ${(error as Error).message}` }],
        'fixture',
      );
    }
    const parsed = searchFileSchema.safeParse(raw);
    if (!parsed.success) throw new ConfigError(file, describeIssues(parsed.error), 'fixture');
    for (const entry of parsed.data.entries) searches.set(normalizeQuery(entry.query), entry.results);
  }
  return searches;
}

// Front matter is ASCII YAML between two `---` lines; the body after it is in the declared charset.
const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/;

function padTo(content: string, chars: number): string {
  if (content.length >= chars) return content;
  const filler = `\n\n${content.trim()}`;
  return (content + filler.repeat(Math.ceil((chars - content.length) / filler.length))).slice(0, chars);
}

function loadPage(file: string): FixturePage {
  const bytes = readFileSync(file);
  const head = bytes.subarray(0, Math.min(bytes.length, 8192)).toString('latin1');
  const match = FRONT_MATTER.exec(head);
  if (!match)
    throw new ConfigError(
      file,
      [{ path: '', message: 'missing YAML front matter between --- lines' }],
      'fixture',
    );
  const parsed = frontMatterSchema.safeParse(parseYaml(match[1] ?? ''));
  if (!parsed.success) throw new ConfigError(file, describeIssues(parsed.error), 'fixture');
  const meta = parsed.data;
  const body = new TextDecoder(meta.charset).decode(bytes.subarray(match[0].length));
  return {
    url: normalizeUrl(meta.url),
    title: meta.title,
    content: meta.generate_chars ? padTo(body, meta.generate_chars) : body,
    status: meta.status,
    hostile: meta.hostile,
    canarySecrets: meta.canary_secrets,
    canaryHosts: meta.canary_hosts,
    file,
  };
}

/**
 * Loads the fixture corpus once, at gateway creation: never on the request path.
 * @throws ConfigError naming the bad fixture file.
 */
export function loadCorpus(dirs: { search: string; pages: string }): Corpus {
  const pages = new Map<string, FixturePage>();
  for (const file of listFiles(dirs.pages, '.md')) {
    const page = loadPage(file);
    pages.set(page.url, page);
  }
  const all = [...pages.values()];
  return {
    searches: loadSearches(dirs.search),
    pages,
    canarySecrets: all.flatMap((p) => p.canarySecrets),
    canaryHosts: all.flatMap((p) => p.canaryHosts),
  };
}
