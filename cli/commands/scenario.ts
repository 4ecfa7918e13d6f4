import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { CliError } from '../cli-options.ts';

interface FromHarOptions {
  out?: string;
  name?: string;
  agentMap?: Record<string, string>;
}

// A recording larger than this is not read (docs/reference.md): it is read whole, and parsed; a larger
// journal is converted by the slice (admin journal export --agent, --since).
export const MAX_RECORDING_BYTES = 256 * 1024 * 1024;

/** `--agent-map calling=recorded[,calling=recorded...]`, repeatable. */
function agentMapOption(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const map = { ...previous };
  for (const pair of value.split(',')) {
    const match = /^\s*([^=\s]+)\s*=\s*([^=\s]+)\s*$/.exec(pair);
    if (!match)
      throw new CliError(
        `--agent-map takes calling=recorded pairs (e.g. agent-early=agent-verified), got "${pair}"`,
      );
    map[match[1] as string] = match[2] as string;
  }
  return map;
}

/** The text of a recording file: a regular file of at most MAX_RECORDING_BYTES, else a one-line error. */
function readRecordingFile(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(
      `Cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : (code ?? String(error))}`,
    );
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new CliError(`Cannot read ${file}: not a regular file`);
    if (stat.size > MAX_RECORDING_BYTES)
      throw new CliError(`Cannot read ${file}: larger than ${MAX_RECORDING_BYTES} bytes (${stat.size})`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * `agent-gateway scenario from-har FILE`: a recorded exchange (the proxy's HAR export, any HAR 1.2 file, or
 * the journal's NDJSON export) as a scenario file that `serve --scenario` replays (docs/qa.md).
 */
export function registerScenarioCommand(program: Command) {
  const scenario = program.command('scenario').description('make scenario files');
  scenario
    .command('from-har')
    .argument(
      '<file>',
      "a HAR 1.2 file (e.g. the proxy's admin export --format har) or the journal's NDJSON export",
    )
    .description(
      'convert a recorded exchange into a scenario that answers each agent the way the recorded gateway did',
    )
    .option('--out <file>', 'write the scenario to this file instead of stdout')
    .option('--name <name>', 'the scenario name (default: replay- and the file name)')
    .option(
      '--agent-map <calling=recorded,...>',
      'which recorded agent answers which calling agent (repeatable); default: one recorded agent answers every agent, several answer the agents of the same id',
      agentMapOption,
    )
    .addHelpText(
      'after',
      '\nExample:\n  npx --no-install agent-gateway admin export --format har --out incident.har --base-url http://127.0.0.1:8788\n  npx --no-install agent-gateway scenario from-har incident.har --out incident.yaml\n  npx --no-install agent-gateway serve --scenario incident.yaml\n',
    )
    .action(async (file: string, options: FromHarOptions) => {
      // zod, yaml and the converter load here, not at start.
      const [{ readRecording }, { scenarioFromRecording }] = await Promise.all([
        import('../../mock-server/scenarios/replay-recording.ts'),
        import('../../mock-server/scenarios/replay-convert.ts'),
      ]);
      const text = readRecordingFile(resolve(file));
      let conversion: ReturnType<typeof scenarioFromRecording>;
      try {
        conversion = scenarioFromRecording(readRecording(text, file), {
          source: file,
          name: options.name,
          agentMap: options.agentMap,
        });
      } catch (error) {
        // Out of stack or past a string's length on some hostile shape: one line, never a stack trace.
        if (error instanceof RangeError) throw new CliError(`Cannot convert ${file}: ${error.message}`);
        throw error;
      }
      for (const warning of conversion.warnings) process.stderr.write(`agent-gateway: note: ${warning}\n`);
      if (!options.out) {
        process.stdout.write(conversion.yaml);
        return;
      }
      const path = resolve(options.out);
      try {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, conversion.yaml);
      } catch (error) {
        throw new CliError(`Cannot write ${path}: ${(error as Error).message}`);
      }
      process.stderr.write(`agent-gateway: wrote scenario ${conversion.scenario.name} to ${path}\n`);
    });
}
