/**
 * Tokens that mean something to an implementation rather than to the spec: names a plain object or its
 * prototype answers (a token table kept in `{}` finds `__proto__` or `toString`), strings a parser or a
 * loose comparison reads as a value (`null`, `undefined`, `0`, `NaN`, `true`, number-like), and an
 * empty value. Every one goes on every protected endpoint in every run (not left to the seed): each must
 * get 401 like any other token the gateway did not issue.
 */
export const SPECIAL_TOKENS: readonly string[] = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  '',
  'null',
  'undefined',
  '0',
  '-1',
  '1e3',
  '0x1',
  'NaN',
  'Infinity',
  'true',
  'false',
  '[]',
  '{}',
  '*',
  'Bearer',
];
