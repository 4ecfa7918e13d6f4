import { SPEC_ENDPOINTS } from '../../vocabulary/endpoints.ts';
import { IDENTITY_HEADER } from '../../vocabulary/identity-header.ts';
import { GatewayError } from '../errors.ts';

/** The three query parameters of the instruction page (spec section 4, "Token instruction page"). */
interface InstructionParams {
  app: string;
  endpoint: string;
  header: string;
}

const PARAMS = ['app', 'endpoint', 'header'] as const;
// Printable text without control characters; the name is echoed back, escaped, in the page.
const APP_NAME = /^[^\p{Cc}\p{Cf}]{1,100}$/u;

const badParam = (param: string, message: string) =>
  new GatewayError('invalid_request', {
    message: `${param}: ${message}`,
    details: { field: param, expected: 'app=<name>&endpoint=<whoami URL>&header=X-Agent-Identity' },
  });

/** Validates the query string; every problem is a 400 naming the parameter. */
export function parseInstructionParams(query: URLSearchParams): InstructionParams {
  const values: Partial<Record<(typeof PARAMS)[number], string>> = {};
  for (const param of PARAMS) {
    const all = query.getAll(param);
    if (all.length === 0 || all[0] === '') throw badParam(param, 'is required');
    if (all.length > 1) throw badParam(param, 'must be given once');
    values[param] = all[0];
  }
  const { app = '', endpoint = '', header = '' } = values;
  if (!APP_NAME.test(app)) throw badParam('app', 'must be 1-100 printable characters');
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw badParam('endpoint', 'must be an absolute URL, e.g. http://127.0.0.1:8787/v1/whoami');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw badParam('endpoint', 'must be an http or https URL');
  if (url.username || url.password) throw badParam('endpoint', 'must not carry credentials');
  if (url.search || url.hash) throw badParam('endpoint', 'must not have a query string or fragment');
  if (!url.pathname.endsWith(SPEC_ENDPOINTS.whoami.path)) {
    throw badParam(
      'endpoint',
      `must be the full address of the whoami endpoint, ending in ${SPEC_ENDPOINTS.whoami.path}`,
    );
  }
  if (header.toLowerCase() !== IDENTITY_HEADER.toLowerCase()) {
    throw badParam(
      'header',
      `this identity provider's tokens are sent in ${IDENTITY_HEADER} (spec section 5)`,
    );
  }
  return { app, endpoint: url.href, header: IDENTITY_HEADER };
}

// URLs go into the page's shell lines single-quoted: `;`, `$(` or `|`, all legal in a URL path, stay
// literal, and a quote (percent-encoded: also legal) cannot end the quoting.
const quoted = (url: string) => `'${url.replace(/'/g, '%27')}'`;

interface Step {
  text: string;
  code?: string;
}

function steps(params: InstructionParams, idpOrigin: string, ttlSeconds: number): Step[] {
  const minutes = ttlSeconds >= 120 ? `${Math.round(ttlSeconds / 60)} minutes` : `${ttlSeconds} seconds`;
  return [
    { text: 'Have your agent registered with this identity provider: you need its API key.' },
    {
      text: 'Exchange the API key for a short-lived identity token:',
      code: `curl -s -X POST ${quoted(`${idpOrigin}/idp/token`)} -H 'content-type: application/json' -d '{"api_key":"<YOUR_API_KEY>"}'`,
    },
    {
      text: `Send the token in the ${params.header} header on every call, and check it with whoami:`,
      code: `curl -s ${quoted(params.endpoint)} -H '${params.header}: <TOKEN>'`,
    },
    {
      text: `Tokens expire after ${minutes}. On 401 invalid_identity_token, obtain a fresh token and resend; never retry the same token.`,
    },
    { text: 'Never put the token, or any other secret, in a search query or a URL.' },
  ];
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
// The app name is the only free text: neutralise markdown so it cannot add headings, links or instructions.
// It is never at the start of a line, so list markers (-, +, 1.) need no escaping.
const escapeMarkdown = (text: string) => text.replace(/[\\`*_{}[\]()<>#!|~]/g, '\\$&');

/** The page as markdown (for agents; the default). */
export function renderInstructionMarkdown(
  params: InstructionParams,
  idpOrigin: string,
  ttlSeconds: number,
): string {
  const body = steps(params, idpOrigin, ttlSeconds)
    .map((s, i) => `${i + 1}. ${s.text}${s.code ? `\n\n   \`\`\`sh\n   ${s.code}\n   \`\`\`` : ''}`)
    .join('\n');
  return `# Identity token for ${escapeMarkdown(params.app)}\n\nThis gateway identifies agents by short-lived identity tokens sent in the \`${params.header}\` header.\n\n${body}\n`;
}

/** The same page as HTML (for a browser). */
export function renderInstructionHtml(
  params: InstructionParams,
  idpOrigin: string,
  ttlSeconds: number,
): string {
  const items = steps(params, idpOrigin, ttlSeconds)
    .map(
      (s) =>
        `<li><p>${escapeHtml(s.text)}</p>${s.code ? `<pre><code>${escapeHtml(s.code)}</code></pre>` : ''}</li>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Identity token for ${escapeHtml(params.app)}</title></head>
<body><h1>Identity token for ${escapeHtml(params.app)}</h1>
<p>This gateway identifies agents by short-lived identity tokens sent in the <code>${escapeHtml(params.header)}</code> header.</p>
<ol>
${items}
</ol></body></html>
`;
}
