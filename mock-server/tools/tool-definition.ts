import type { z } from 'zod';
import type { ToolVocabulary } from '../../vocabulary/tools.ts';
import type { Corpus } from '../providers/corpus.ts';
import type { FetchProvider } from '../providers/fetch-provider.ts';
import type { SearchProvider } from '../providers/search-provider.ts';

/** What a tool's provider may draw on: the runtime's pluggable providers, the corpus and its seed. */
export interface ToolProviders {
  readonly search: SearchProvider;
  readonly fetchPage: FetchProvider;
  readonly corpus: Corpus;
  readonly seed: number;
}

/**
 * One tool, declared once (the third registry beside the suite's checks and the client rules): everything
 * the harness knows of it. The route table, the pipeline, the OpenAPI document, policy and limits, the
 * journal, the client report and the CLI read it from here; a new built-in tool is one such file in this
 * folder (and its entry in `index.ts`), an extra tool one entry of a config's `tools` (`extra-tool.ts`).
 */
export interface ToolDefinition<Body = Record<string, unknown>> {
  /** Its name (`web.search`): the journal's operation, the config key, the policy's and allowlists' entry. */
  readonly name: string;
  /** Its vocabulary entry: named by the spec, or the gateway's own (an extra tool); method, path, field. */
  readonly vocabulary: ToolVocabulary;
  /** The OpenAPI `operationId` and the key its handler is bound under (`webSearch`). */
  readonly routeId: string;
  readonly summary: string;
  readonly description: string;
  /** The request body: validates it (400 naming the first bad field) and describes it (OpenAPI `<Name>Request`). */
  readonly request: { readonly name: string; readonly schema: z.ZodType<Body> };
  /** The success answer's shape (OpenAPI `<Name>Response`; `openapi.test.ts` parses real answers with it). */
  readonly answer: { readonly name: string; readonly schema: z.ZodType };
  /**
   * The body field whose text the call sends out into the world (the search query, the fetch URL): the
   * journal keeps it, redacted, as that field (`query`, `url`) and the secret scan reads it as outgoing
   * text (client rule 2). None: every string of the body is scanned, none is journaled.
   */
  readonly journalField?: 'query' | 'url';
  /** The provider that answers it: a synchronous one answers without a promise. */
  provider(providers: ToolProviders): (body: Body) => unknown;
  /**
   * What makes two calls the same request (the client report's retries and repeats): the parts of the
   * parsed body that carry its meaning, each already normalised. `near` is when it was sent (the gateway's
   * clock and the real one), for telling a timestamp cache-buster from data.
   */
  requestMeaning(body: Record<string, unknown>, near?: readonly number[]): readonly string[];
  /** Whether its answer is untrusted content (spec section 1, client rule 1): the fetch tool's is. */
  readonly untrusted: boolean;
  /**
   * Its answer when it is the same for every request (an extra tool answered from a fixture file): the
   * client report reads what an untrusted one plants in it (`untrusted-content`). Absent: it depends on the
   * request (the built-in tools, a generated answer).
   */
  readonly fixedAnswer?: unknown;
  /** An extra tool the config declares write-like (spec §7): its OpenAPI operation says so (`x-write-like`). */
  readonly writeLike?: boolean;
}

/** Any tool, whatever its body. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of different bodies; each checks its own.
export type AnyToolDefinition = ToolDefinition<any>;
