import fc from 'fast-check';
import { IDENTITY_HEADER } from '../../vocabulary/identity-header.ts';

/**
 * `X-Agent-Identity` in any other mix of upper and lower case (HTTP field names are case-insensitive);
 * never the spelling of the spec itself, which proves nothing here.
 */
export const headerNameCasing = (name = IDENTITY_HEADER): fc.Arbitrary<string> =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((upper) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''))
    .filter((spelling) => spelling !== name);
