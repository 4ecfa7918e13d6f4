import { afterEach, describe, expect, it, vi } from 'vitest';
import { type CheckOptions, checkPreamble, checkTokens, replayCommand, tokenSource } from './check-run.ts';

const base: CheckOptions = { baseUrl: 'http://127.0.0.1:1', adviceFor: 'cli' };
const suite = { numRuns: 7, timeBudgetSeconds: 90, maxWaitSeconds: 12 };
afterEach(() => vi.unstubAllEnvs());

describe('check: the steps of a run', () => {
  it('the opening lines name the skipped checks, the tools and the budget from what was given', () => {
    const text = checkPreamble(
      { ...base, tool: ['web.search', 'web.extract=/v1/web/extract'], allowedTools: ['web.search'] },
      [{ id: 'a.one', needs: ['deniedToken'] }, { id: 'b.two' }],
      suite,
      { token: 't' },
    );
    expect(text).toContain(
      '2 checks, 7 cases per property (no denied token (--denied-token): a.one will be skipped)',
    );
    expect(text).toContain('Tools: web.search, web.extract (--tool)');
    expect(text).toContain('--allowed-tools web.search: web.extract not called with $TOKEN');
    expect(text).toContain('Time budget 90 s');
    expect(text).toContain('each at most 12 s');
    const quiet = checkPreamble(base, [{ id: 'a.one', needs: ['deniedToken'] }], suite, {
      token: 't',
      deniedToken: 'd',
    });
    expect(quiet).not.toContain('will be skipped');
    expect(quiet).toContain("(the spec's; declare your gateway's with --tool NAME=PATH or --openapi)");
  });

  it('tokens: a flag or a command, never both; the environment is a fallback; a valid token is required', async () => {
    vi.stubEnv('AGENT_GATEWAY_TOKEN', 'from-env');
    vi.stubEnv('AGENT_GATEWAY_DENIED_TOKEN', '');
    const fromEnv = checkTokens(base);
    expect(await fromEnv.token.current()).toBe('from-env');
    expect(fromEnv.deniedToken).toBeUndefined();
    expect(await checkTokens({ ...base, token: 'flag' }).token.current()).toBe('flag');
    expect(() => checkTokens({ ...base, token: 'a', tokenCommand: 'echo b' })).toThrow(/not both/);
    vi.stubEnv('AGENT_GATEWAY_TOKEN', '');
    expect(() => checkTokens(base)).toThrow(/Give --token or --token-command/);
    expect(() => tokenSource('token', ' ', undefined, '$TOKEN')).toThrow(/--token is empty/);
    // Expired and revoked tokens are roles of their own, each from its flag, command or variable.
    vi.stubEnv('AGENT_GATEWAY_REVOKED_TOKEN', 'revoked-from-env');
    const roles = checkTokens({ ...base, token: 't', expiredTokenCommand: 'printf %s old' });
    expect(await roles.expiredToken?.current()).toBe('old');
    expect(await roles.revokedToken?.current()).toBe('revoked-from-env');
    expect(roles.expiredToken?.variable).toBe('$EXPIRED_TOKEN');
    expect(roles.revokedToken?.variable).toBe('$REVOKED_TOKEN');
  });

  it('the replay command keeps tokens in variables and names the case', () => {
    const line = replayCommand({
      ...base,
      tokenCommand: 'get token',
      deniedToken: 'secret',
      allowedTools: [],
    })({ id: 'auth.x' } as never, { seed: 5, path: '0:1' } as never);
    expect(line).toContain("--token-command 'get token'");
    expect(line).toContain('--denied-token "$DENIED_TOKEN"');
    expect(line).not.toContain('secret');
    expect(line).toContain('--allowed-tools none');
    expect(line).toMatch(/--only auth\.x --seed 5 --path '?0:1'?$/);
  });
});
