import type { z } from 'zod';
import { TOOLS } from '../../vocabulary/tools.ts';
import { searchRequestSchema, searchResponseSchema } from '../providers/search-provider.ts';
import { meaningOfQuery } from './request-meaning.ts';
import type { ToolDefinition } from './tool-definition.ts';
import { toolRouteId } from './tool-route-id.ts';

export { searchResponseSchema };

/**
 * Web search (spec sections 1 and 4; safe to retry): known queries from fixtures/search, the rest seeded
 * generated results. Two calls are the same request when their queries mean the same (case, spacing and
 * punctuation aside) and they ask for as many results.
 */
export const webSearch: ToolDefinition<z.output<typeof searchRequestSchema>> = {
  name: 'web.search',
  vocabulary: TOOLS['web.search'],
  routeId: toolRouteId('web.search'),
  summary: 'Web search (spec section 4; safe to retry)',
  description:
    'Known queries answer from fixtures/search, others with seeded generated results: a retry gets the same body.',
  request: { name: 'SearchRequest', schema: searchRequestSchema },
  answer: { name: 'SearchResponse', schema: searchResponseSchema },
  journalField: 'query',
  provider:
    ({ search }) =>
    (body) =>
      search.search(body),
  requestMeaning: (body) => [meaningOfQuery(String(body.query ?? '')), String(body.count ?? '')],
  untrusted: false,
};
