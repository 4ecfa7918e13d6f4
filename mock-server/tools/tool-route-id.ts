/**
 * A tool's OpenAPI operation id and route key, from its name: its words in camel case (`web.extract` ->
 * `webExtract`). Imports nothing, so the config's schema can check two names never share one.
 *
 * @example
 * toolRouteId('web.search'); // 'webSearch'
 */
export const toolRouteId = (name: string) =>
  name
    .split(/[.\-_]/)
    .map((word, i) => (i === 0 ? word : word.charAt(0).toUpperCase() + word.slice(1)))
    .join('');
