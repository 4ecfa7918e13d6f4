import { Command, CommanderError } from 'commander';
import { CannotRunError } from '../conformance/runner.ts';
import { TokenCommandError } from '../conformance/token-source.ts';
import { ConfigError } from '../mock-server/config/load-config.ts';
import { GatewayError } from '../mock-server/errors.ts';
import { CliError, EXIT } from './cli-options.ts';
import { registerCheckCommand } from './commands/check.ts';
import { registerReportCommand } from './commands/report.ts';
import { registerServeCommand } from './commands/serve.ts';
import { registerTokenCommand } from './commands/token.ts';

const program = new Command()
  .name('agent-gateway')
  .description(
    'Reference gateway, simulated identity provider and conformance suite for the Agent Tool Gateway spec',
  )
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride();

registerServeCommand(program);
registerTokenCommand(program);
registerCheckCommand(program);
registerReportCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Help and version exit 0; a usage mistake means the command could not do its job (2).
    process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.cannotRun);
  }
  const known = [CliError, ConfigError, GatewayError, CannotRunError, TokenCommandError];
  if (known.some((type) => error instanceof type)) {
    process.stderr.write(`agent-gateway: ${(error as Error).message}
`);
    process.exit(error instanceof CliError ? error.exitCode : EXIT.cannotRun);
  }
  throw error;
}
