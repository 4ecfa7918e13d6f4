/**
 * The tokens `agent-gateway check` is given, declared once: each role's flag pair (a token, or a command
 * printing one), its help, and the environment variable a static token may come from instead (how the
 * GitHub Action passes a secret, never on a command line). check.ts builds its flags from these rows,
 * check-run.ts reads the tokens by them, and the Action (cli/github-action.ts, action.yml) has an input for
 * each flag (test/github-action.test.ts holds the three together).
 */
export interface TokenRole {
  /** The flag of a static token (`expired-token`); its command is `<flag>-command`. */
  flag: string;
  /** The option key of the run (`runConformance`'s input). */
  key: 'token' | 'deniedToken' | 'expiredToken' | 'revokedToken';
  /** The variable a static token may be given in, and that reproductions name it by. */
  env: string;
  /** The shell variable the reproductions name the token by ($TOKEN, ...). */
  variable: string;
  description: string;
  commandDescription: string;
}

export const TOKEN_ROLES: readonly TokenRole[] = [
  {
    flag: 'token',
    key: 'token',
    env: 'AGENT_GATEWAY_TOKEN',
    variable: '$TOKEN',
    description:
      'a valid identity token allowed to call both tools (default: $AGENT_GATEWAY_TOKEN; see --allowed-tools)',
    commandDescription:
      'a shell command printing such a token as its last line; re-run when the token expires',
  },
  {
    flag: 'denied-token',
    key: 'deniedToken',
    env: 'AGENT_GATEWAY_DENIED_TOKEN',
    variable: '$DENIED_TOKEN',
    description:
      'a valid token that may not call --denied-tool (default: $AGENT_GATEWAY_DENIED_TOKEN); authz.access-denied needs it',
    commandDescription: 'a shell command printing such a token',
  },
  {
    flag: 'expired-token',
    key: 'expiredToken',
    env: 'AGENT_GATEWAY_EXPIRED_TOKEN',
    variable: '$EXPIRED_TOKEN',
    description:
      'a genuine token past its lifetime (default: $AGENT_GATEWAY_EXPIRED_TOKEN); auth.expired-token checks it gets 401 invalid_identity_token',
    commandDescription: 'a shell command printing such a token',
  },
  {
    flag: 'revoked-token',
    key: 'revokedToken',
    env: 'AGENT_GATEWAY_REVOKED_TOKEN',
    variable: '$REVOKED_TOKEN',
    description:
      'a genuine token its identity provider revoked before its expiry (default: $AGENT_GATEWAY_REVOKED_TOKEN); auth.revoked-token checks it gets 401 invalid_identity_token',
    commandDescription: 'a shell command printing such a token',
  },
];
