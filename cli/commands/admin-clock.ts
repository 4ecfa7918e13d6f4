import type { Command } from 'commander';
import { adminCall } from '../admin-client.ts';
import { CliError } from '../cli-options.ts';
import { type ConnectionOptions, connected, print, targetOf } from './admin-connection.ts';
import { type ClockState, clockLine, parseDuration } from './admin-text.ts';

/** `admin clock show | freeze | resume | reset | advance | set`: the gateway's virtual clock. */
export function registerClock(admin: Command) {
  const clock = admin.command('clock').description('the virtual clock');
  const simple = (name: string, description: string, method: string, path: string, body?: () => unknown) =>
    connected(clock.command(name, { isDefault: name === 'show' }).description(description)).action(
      async (options: ConnectionOptions) => {
        print(options, await adminCall<ClockState>(targetOf(options), method, path, body?.()), clockLine);
      },
    );
  simple('show', 'the gateway clock', 'GET', '/__admin/clock');
  simple('freeze', 'stop the clock', 'POST', '/__admin/clock/freeze');
  simple('resume', 'let it run again', 'POST', '/__admin/clock/resume');
  simple('reset', 'back to real time', 'POST', '/__admin/clock/reset');
  connected(
    clock
      .command('advance <duration>')
      .description('move it forward: 10s, 1500ms, 2m, 1h (or seconds); a frozen clock stays frozen'),
  ).action(async (duration: string, options: ConnectionOptions) => {
    let ms: number;
    try {
      ms = parseDuration(duration);
    } catch (error) {
      throw new CliError(`advance ${duration}: ${(error as Error).message}`);
    }
    print(
      options,
      await adminCall<ClockState>(targetOf(options), 'POST', '/__admin/clock/advance', { ms }),
      clockLine,
    );
  });
  connected(
    clock
      .command('set <time>')
      .description('set it: ISO 8601 (2026-01-01T00:00:00Z) or epoch ms')
      .option('--frozen', 'and freeze it there, in the same step (no time runs between set and freeze)')
      .option('--running', 'and let it run on from there'),
  ).action(async (time: string, options: ConnectionOptions & { frozen?: boolean; running?: boolean }) => {
    if (options.frozen && options.running) throw new CliError('Give --frozen or --running, not both.');
    const value = /^\d+$/.test(time) ? Number(time) : time;
    const frozen = options.frozen ? true : options.running ? false : undefined;
    print(
      options,
      await adminCall<ClockState>(targetOf(options), 'POST', '/__admin/clock/set', {
        time: value,
        ...(frozen === undefined ? {} : { frozen }),
      }),
      clockLine,
    );
  });
}
