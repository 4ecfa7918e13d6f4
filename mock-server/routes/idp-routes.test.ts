import { describe, expect, it } from 'vitest';
import { createGateway } from '../gateway.ts';
import { preferredType } from './idp-routes.ts';

describe('the instruction page is markdown for agents, HTML for browsers', () => {
  const types = ['text/markdown', 'text/html'];
  it.each([
    [undefined, 'text/markdown'],
    ['*/*', 'text/markdown'],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'text/html'],
    ['text/markdown, text/html;q=0.5', 'text/markdown'],
    ['text/*;q=0.5, text/html', 'text/html'],
    ['application/json', 'text/markdown'],
    ['text/html;q=0', 'text/markdown'],
  ])('Accept %s -> %s', (accept, expected) => {
    expect(preferredType(accept, types, 'text/markdown')).toBe(expected);
  });

  it('serves both, with Vary: Accept', async () => {
    const gateway = createGateway();
    const url =
      'http://gw.test/idp/auth.md?app=bot&endpoint=http%3A%2F%2Fgw.test%2Fv1%2Fwhoami&header=X-Agent-Identity';
    const markdown = await gateway.fetch(new Request(url));
    expect(markdown.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(markdown.headers.get('vary')).toBe('Accept');
    expect(await markdown.text()).toMatch(/^# Identity token for bot/);
    const html = await gateway.fetch(new Request(url, { headers: { accept: 'text/html' } }));
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await html.text()).toMatch(/^<!doctype html>/);
  });
});
