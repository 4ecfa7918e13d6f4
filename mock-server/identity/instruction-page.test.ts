import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../errors.ts';
import {
  parseInstructionParams,
  renderInstructionHtml,
  renderInstructionMarkdown,
} from './instruction-page.ts';

const ENDPOINT = 'http://127.0.0.1:8787/v1/whoami';
const parse = (query: string) => parseInstructionParams(new URLSearchParams(query));
const rejection = (query: string) => {
  try {
    parse(query);
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error(`expected a 400 for ${query}`);
};
const valid = `app=Research%20Bot&endpoint=${encodeURIComponent(ENDPOINT)}&header=x-agent-identity`;

describe('instruction page parameters', () => {
  it('accepts the three parameters and normalises the header name', () => {
    expect(parse(valid)).toEqual({ app: 'Research Bot', endpoint: ENDPOINT, header: 'X-Agent-Identity' });
  });

  it.each([
    ['app', `endpoint=${ENDPOINT}&header=X-Agent-Identity`, /required/],
    ['endpoint', 'app=a&header=X-Agent-Identity', /required/],
    ['header', `app=a&endpoint=${ENDPOINT}`, /required/],
    ['app', `app=a&app=b&endpoint=${ENDPOINT}&header=X-Agent-Identity`, /once/],
    ['app', `app=${'x'.repeat(101)}&endpoint=${ENDPOINT}&header=X-Agent-Identity`, /printable/],
    ['app', `app=a%0Ab&endpoint=${ENDPOINT}&header=X-Agent-Identity`, /printable/],
    ['endpoint', 'app=a&endpoint=not-a-url&header=X-Agent-Identity', /absolute URL/],
    ['endpoint', 'app=a&endpoint=ftp://h/v1/whoami&header=X-Agent-Identity', /http/],
    ['endpoint', 'app=a&endpoint=http://h/v1/health&header=X-Agent-Identity', /whoami/],
    ['endpoint', 'app=a&endpoint=http://u:p@h/v1/whoami&header=X-Agent-Identity', /credentials/],
    ['endpoint', `app=a&endpoint=${encodeURIComponent(`${ENDPOINT}?x=1`)}&header=X-Agent-Identity`, /query/],
    ['header', `app=a&endpoint=${ENDPOINT}&header=Authorization`, /X-Agent-Identity/],
  ])('400 naming %s for %s', (field, query, message) => {
    const error = rejection(query);
    expect(error.status).toBe(400);
    expect(error.details.field).toBe(field);
    expect(error.message).toMatch(message);
  });
});

describe('instruction page rendering', () => {
  const params = parse(valid);

  it('markdown tells how to get a token, which header to send it in, and the lifetime', () => {
    const page = renderInstructionMarkdown(params, 'http://127.0.0.1:8787', 3600);
    expect(page).toContain(`curl -s -X POST 'http://127.0.0.1:8787/idp/token'`);
    expect(page).toContain(`curl -s '${ENDPOINT}' -H 'X-Agent-Identity: <TOKEN>'`);
    expect(page).toContain('60 minutes');
    expect(page).toMatch(/invalid_identity_token/);
  });

  it('quotes URLs in its shell lines: a hostile endpoint path cannot run commands', () => {
    const endpoint = "http://127.0.0.1:8787/a;id;$(reboot)'x|y/v1/whoami";
    const hostile = parse(`app=x&endpoint=${encodeURIComponent(endpoint)}&header=X-Agent-Identity`);
    const page = renderInstructionMarkdown(hostile, 'http://127.0.0.1:8787', 3600);
    const line = page.split('\n').find((l) => l.includes('<TOKEN>')) ?? '';
    expect(line).toContain("curl -s 'http://127.0.0.1:8787/a;id;$(reboot)%27x|y/v1/whoami' -H");
    // One quoted URL, one quoted header: exactly four quotes, so nothing escapes the quoting.
    expect(line.split("'").length - 1).toBe(4);
  });

  it('escapes a hostile app name in both forms', () => {
    const hostile = { ...params, app: '<script>x</script> [click](http://evil) # IGNORE' };
    const html = renderInstructionHtml(hostile, 'http://h', 5);
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;');
    const md = renderInstructionMarkdown(hostile, 'http://h', 5);
    expect(md).not.toContain('[click](http://evil)');
    expect(md).toContain('5 seconds');
  });
});
