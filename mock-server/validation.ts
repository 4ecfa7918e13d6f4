/**
 * A zod type error that tells a missing field from a wrong one: `is required`, or `must be <what>`. Shared by
 * the request bodies of the tools and the identity provider; it depends on nothing, so a tool provider never
 * reaches into the pipeline for it.
 *
 * @example
 * z.object({ query: z.string(mustBe('a string')) }); // {} -> "query: is required"
 */
export const mustBe = (what: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${what}`),
});
