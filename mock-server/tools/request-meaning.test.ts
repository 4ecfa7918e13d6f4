import { describe, expect, it } from 'vitest';
import { meaningOfQuery, meaningOfUrl, requestKey, wordsOf } from './request-meaning.ts';
import { webFetch } from './web-fetch.ts';
import { webSearch } from './web-search.ts';

describe('what a request means', () => {
  it.each([
    ['weather in paris', 'weather in paris'],
    ['  Weather, in PARIS? ', 'weather in paris'],
    ['weather\tin\n paris!!!', 'weather in paris'],
    ['WEATHER — in «Paris»', 'weather in paris'],
    // Compatibility forms (full-width letters) fold to the plain ones.
    ['ｗｅａｔｈｅｒ in paris', 'weather in paris'],
  ])('a query %j means %j', (query, meaning) => {
    expect(meaningOfQuery(query)).toBe(meaning);
  });

  it('keeps what changes the question: other words, and symbols that are not punctuation', () => {
    expect(meaningOfQuery('weather in london')).not.toBe(meaningOfQuery('weather in paris'));
    expect(meaningOfQuery('c++ templates')).toBe('c++ templates');
    expect(wordsOf('  ')).toEqual([]);
    expect(wordsOf('Paris weather, today')).toEqual(['paris', 'weather', 'today']);
  });

  it.each([
    ['https://example.com/a', 'example.com/a'],
    ['HTTPS://WWW.Example.COM./a/', 'example.com/a'],
    ['http://example.com:80/a#section', 'example.com/a'],
    ['https://example.com:8443/a', 'example.com:8443/a'],
    ['https://example.com/a?b=2&a=1', 'example.com/a?a=1&b=2'],
    ['https://example.com/%61%2Fb', 'example.com/a%2Fb'],
    ['https://example.com/', 'example.com'],
    ['not a url ', 'not a url'],
    // Cache-busters: their names, a millisecond timestamp or a random fraction under any name.
    ['https://example.com/a?_=1732540800123', 'example.com/a'],
    ['https://example.com/a?q=x&cb=8f3a9c&t=1732540800', 'example.com/a?q=x'],
    ['https://example.com/a?q=x&nocache=1&v=1732540800123', 'example.com/a?q=x'],
    ['https://example.com/a?q=x&r=0.8361924017', 'example.com/a?q=x'],
    // Ids stay: a ten-digit number under another name, a page number, a video id.
    ['https://example.com/a?id=1234567890', 'example.com/a?id=1234567890'],
    ['https://example.com/a?page=2&v=dQw4w9WgXcQ', 'example.com/a?page=2&v=dQw4w9WgXcQ'],
    // A 13-digit id far from the request's time is an id, not a timestamp.
    ['https://example.com/a?id=1234567890123', 'example.com/a?id=1234567890123'],
  ])('a URL %j means %j', (url, meaning) => {
    // Sent on 2024-11-25, when 1732540800123 was the time.
    expect(meaningOfUrl(url, [1732540800123 + 3_600_000])).toBe(meaning);
  });

  it('two 13-digit ids under another name are two requests; a timestamp of the hour is a cache-buster', () => {
    const at = [1732540800123];
    const ids = ['https://example.com/item?id=1234567890123', 'https://example.com/item?id=1234567890124'];
    expect(meaningOfUrl(ids[0] as string, at)).not.toBe(meaningOfUrl(ids[1] as string, at));
    expect(meaningOfUrl('https://example.com/item?v=1732540801000', at)).toBe('example.com/item');
  });

  it('keys a retry that changed case, spacing, punctuation or an ignored field as the same request', () => {
    const key = requestKey(webSearch, { query: 'weather in paris', count: 5 });
    expect(requestKey(webSearch, { query: 'Weather in Paris?', count: 5, attempt: 3 })).toBe(key);
    expect(requestKey(webSearch, { query: 'weather in paris', count: 6 })).not.toBe(key);
    expect(requestKey(webFetch, { url: 'https://www.a.example/x/', max_length: 10, format: 'text' })).toBe(
      requestKey(webFetch, { url: 'http://a.example/x', max_length: 10, format: 'text', nonce: 'z' }),
    );
    expect(requestKey(webFetch, { url: 'https://a.example/x' })).not.toBe(
      requestKey(webFetch, { url: 'https://a.example/y' }),
    );
    expect(requestKey(webSearch, { query: 'x' })).toMatch(/^key_[0-9a-f]{8}$/);
  });
});
