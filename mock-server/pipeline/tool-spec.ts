import type { z } from 'zod';
import type { ToolName } from '../config/schema.ts';

/** One tool of the gateway as the pipeline runs it. */
export interface ToolSpec<T = unknown> {
  tool: ToolName;
  path: string;
  /** The body field that carries what the call sends out into the world: the search query or the fetch URL. */
  field: 'query' | 'url';
  /** Validates the parsed body (400 naming the first bad field); a compiled schema on the hot path. */
  schema: z.ZodType<T>;
  /** Calls the tool's provider; a synchronous provider answers without a promise. */
  run(body: T): unknown;
}
