import type { z } from 'zod';
import { TOOLS } from '../../vocabulary/tools.ts';
import { fetchRequestSchema, fetchResponseSchema } from '../providers/fetch-provider.ts';
import { meaningOfUrl } from './request-meaning.ts';
import type { ToolDefinition } from './tool-definition.ts';
import { toolRouteId } from './tool-route-id.ts';

export { fetchResponseSchema };

/**
 * Web fetch (spec sections 1 and 4; safe to retry): pages from fixtures/pages (hostile ones among them),
 * the rest generated. Its content is untrusted input (section 1, client rule 1). Two calls are the same
 * request when their URLs mean the same (scheme, `www.`, parameter order and cache-busters aside) with the
 * same length and format.
 */
export const webFetch: ToolDefinition<z.output<typeof fetchRequestSchema>> = {
  name: 'web.fetch',
  vocabulary: TOOLS['web.fetch'],
  routeId: toolRouteId('web.fetch'),
  summary: 'Web fetch (spec section 4; safe to retry)',
  description: 'The content is untrusted input (spec section 1, rule 1).',
  request: { name: 'FetchRequest', schema: fetchRequestSchema },
  answer: { name: 'FetchResponse', schema: fetchResponseSchema },
  journalField: 'url',
  provider:
    ({ fetchPage }) =>
    (body) =>
      fetchPage.fetch(body),
  requestMeaning: (body, near) => [
    meaningOfUrl(String(body.url ?? ''), near),
    String(body.max_length ?? ''),
    String(body.format ?? ''),
  ],
  untrusted: true,
};
