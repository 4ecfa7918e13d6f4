import { describe, expect, it } from 'vitest';
import { fronted } from '../../test/gateways/proof-target.ts';
import { printable, redactTokens, UNPRINTABLE } from '../../vocabulary/redact.ts';
import { formatCheckLine, formatSummary } from '../reporters/console.ts';
import { runConformance } from './runner.ts';

const TOKEN = 'agt1.eyJzdWIiOiJhZ2VudC12ZXJpZmllZCJ9.Qm9ndXNTaWduYXR1cmVCeXRlc0ZvclRlc3RpbmdPbmx5MDE';

describe('redactTokens', () => {
  it('takes out a token, a truncated echo of it, and a token with something appended', () => {
    expect(redactTokens(`got ${TOKEN} back`, [TOKEN])).toBe('got [redacted token] back');
    expect(redactTokens(`code "${TOKEN.slice(0, 40)}"`, [TOKEN])).toBe('code "[redacted token]"');
    expect(redactTokens(`x: ${TOKEN}zz`, [TOKEN])).toBe('x: [redacted token]');
  });

  it('takes out an altered token echoed back: a character changed, dropped or inserted anywhere', () => {
    const opaque = 'Zk3q9XbV1pL0sT7mW2cR8yN4hJ6gD5fA0eK1uI3oP9aS2dF7';
    for (const token of [TOKEN, opaque])
      for (const at of [0, 7, token.length >> 1, token.length - 1]) {
        const changed = `${token.slice(0, at)}${token[at] === 'Q' ? 'R' : 'Q'}${token.slice(at + 1)}`;
        const dropped = `${token.slice(0, at)}${token.slice(at + 1)}`;
        const inserted = `${token.slice(0, at)}Q${token.slice(at)}`;
        for (const altered of [changed, dropped, inserted])
          expect(redactTokens(`got "${altered}"`, [token])).toBe('got "[redacted token]"');
      }
  });

  it('leaves other long words, short pieces of the token and text without tokens alone', () => {
    const text = `expected 401 with code "missing_identity_token_and_more"; ${TOKEN.slice(0, 12)}`;
    expect(redactTokens(text, [TOKEN])).toBe(text);
    expect(redactTokens(text, [])).toBe(text);
  });
});

describe('printable', () => {
  it('escapes terminal controls and bidi overrides, keeps text, tabs and newlines', () => {
    expect(printable('a\x1b[2Jb\x07\x9b\u202e\tc\nd é ✓')).toBe('a\\x1b[2Jb\\x07\\x9b\\u202e\tc\nd é ✓');
  });
});

describe('gateway-controlled text in reports', () => {
  it('a gateway echoing the token and escape sequences gets neither into the report or the terminal', async () => {
    const target = await fronted(async (request, gateway) => {
      const token = request.headers.get('x-agent-identity');
      if (new URL(request.url).pathname === '/v1/whoami' && token) {
        return Response.json({ code: `\u009b2J\u202e${token.slice(0, 60)}` }, { status: 500 });
      }
      return gateway.fetch(request);
    })();
    try {
      const report = await runConformance({
        baseUrl: target.baseUrl,
        token: target.token,
        only: ['authz.whoami-any-tier'],
        numRuns: 1,
        seed: 1,
      });
      const [result] = report.checks;
      expect(result?.verdict).toBe('fail');
      const printed = `${formatCheckLine(result ?? ({} as never))}\n${formatSummary(report, 1)}`;
      expect(printed).toContain('[redacted token]');
      expect(printed).not.toContain(target.token.slice(0, 20));
      expect(printed).not.toMatch(new RegExp(UNPRINTABLE.source));
    } finally {
      await target.close();
    }
  });
});
