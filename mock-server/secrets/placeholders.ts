/*
 * Documentation placeholders: values shaped like secrets that vendors print in their docs so that readers
 * copy them into examples, and that grant nothing. An agent that searches for one (`AKIAIOSFODNN7EXAMPLE
 * access denied`) is asking about an example, not leaking a key: spec section 1 rule 2 is about secrets.
 */

/** jwt.io's sample token (HS256, "your-256-bit-secret", John Doe), in every JWT tutorial. */
const JWT_IO_SAMPLE =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
// AWS's documented keys end in EXAMPLE (AKIAIOSFODNN7EXAMPLE, AKIAI44QH8DHBEXAMPLE, ASIA...EXAMPLE);
// generated ones never do (their 16 characters are random).
const AWS_EXAMPLE = /^(?:AKIA|ASIA)[0-9A-Z]{9}EXAMPLE$/;
// A run of one character standing for the key material: `ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`.
const FILLER_RUN = /([A-Za-z0-9])\1{15,}/;

/**
 * Whether a match of a well-known secret shape is a documentation placeholder.
 *
 * @example
 * isPlaceholder('AKIAIOSFODNN7EXAMPLE'); // true
 * isPlaceholder('AKIAQ3EGUKJZ4XKRT7PB'); // false
 */
export const isPlaceholder = (match: string): boolean =>
  AWS_EXAMPLE.test(match) || (match.length > 43 && JWT_IO_SAMPLE.includes(match)) || FILLER_RUN.test(match);
