import { z } from 'zod';
import type { MeaningOfCalls } from '../tools/request-meaning.ts';
import type { AnyToolDefinition, ToolProviders } from '../tools/tool-definition.ts';

/** One tool of the gateway as the pipeline runs it, made once from its definition (`tools/`). */
export interface ToolSpec<T = unknown> {
  /** Its name: the journal's operation, the policy's and the limits' tool. */
  tool: string;
  path: string;
  /** The body field that carries what the call sends out into the world (the search query, the fetch URL), if any. */
  field?: 'query' | 'url';
  /** Validates the parsed body (400 naming the first bad field); a compiled schema on the hot path. */
  schema: z.ZodType<T>;
  /** What makes two of its calls the same request (the journal's `request_key`). */
  meaning: MeaningOfCalls;
  /** Calls the tool's provider; a synchronous provider answers without a promise. */
  run(body: T): unknown;
}

/**
 * The pipeline's view of a tool definition: its body schema compiled once (about 20 times faster on a valid
 * body; a failure goes to zod's runtime, so messages are unchanged) and its provider bound to the runtime's.
 */
export function toolSpecOf(definition: AnyToolDefinition, providers: ToolProviders): ToolSpec {
  return {
    tool: definition.name,
    path: definition.vocabulary.path,
    field: definition.journalField,
    schema: z.compile(definition.request.schema),
    meaning: definition,
    run: definition.provider(providers),
  };
}
