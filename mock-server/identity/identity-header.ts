/** The identity header of spec section 5. Header names are case-insensitive; lookups use lower case. */
export const IDENTITY_HEADER = 'X-Agent-Identity';
