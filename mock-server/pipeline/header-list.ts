import type { GatewayRequest } from '../http/context.ts';

const NONE: readonly string[] = [];

/**
 * A request's headers as one flat list, `[lower-case name, value, ...]` (repeated headers joined with `, `):
 * the adapter's own list when it has one (node:http: one array a request), else its pairs flattened, else
 * none. What the record stage's readings and attribution scan.
 */
export function headerList(request: GatewayRequest): readonly string[] {
  const list = request.headerList?.();
  if (list !== undefined) return list;
  const pairs = request.headers?.();
  if (pairs === undefined) return NONE;
  const flat: string[] = [];
  for (const [name, value] of pairs) flat.push(name, value);
  return flat;
}
