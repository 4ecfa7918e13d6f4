import { Command, CommanderError } from 'commander';
// The version is package.json's, the one place it is kept (the Python package's is checked equal to it).
import packageJson from '../package.json' with { type: 'json' };
import { CliError, EXIT } from './cli-options.ts';
import { registerAdminCommand } from './commands/admin.ts';
import { registerCheckCommand } from './commands/check.ts';
import { registerOpenApiCommand } from './commands/openapi.ts';
import { registerProxyCommand } from './commands/proxy.ts';
import { registerReportCommand } from './commands/report.ts';
import { registerScenarioCommand } from './commands/scenario.ts';
import { registerServeCommand } from './commands/serve.ts';
import { registerTokenCommand } from './commands/token.ts';

const program = new Command()
  .name('agent-gateway')
  .description(
    'Reference gateway, simulated identity provider and conformance suite for the Agent Tool Gateway spec',
  )
  .version(packageJson.version)
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride();

registerServeCommand(program);
registerProxyCommand(program);
registerTokenCommand(program);
registerCheckCommand(program);
registerReportCommand(program);
registerAdminCommand(program);
registerOpenApiCommand(program);
registerScenarioCommand(program);

/**
 * Errors that explain themselves in one line (a bad config, a refused token, an unreachable target): told
 * by name, not instanceof, because importing the classes would load the modules that define them (the
 * conformance suite, zod, the gateway) on every start, `--help` included. Each command imports what it
 * needs inside its action.
 */
const EXPLAINED_ERRORS = new Set([
  'CliError',
  'ConfigError',
  'GatewayError',
  'CannotRunError',
  'TokenCommandError',
]);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Help and version exit 0; a usage mistake means the command could not do its job (2).
    process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.cannotRun);
  }
  if (error instanceof Error && EXPLAINED_ERRORS.has(error.name)) {
    process.stderr.write(`agent-gateway: ${(error as Error).message}
`);
    process.exit(error instanceof CliError ? error.exitCode : EXIT.cannotRun);
  }
  throw error;
}
