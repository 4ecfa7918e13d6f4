import type { Command } from 'commander';
import { adminCall } from '../admin-client.ts';
import { type ConnectionOptions, connected, plain, print, targetOf } from './admin-connection.ts';
import { type ClockState, clockLine } from './admin-text.ts';

/** Reads a scenario file (YAML or JSON) to send inline: the admin API reads no files, the CLI can. */
async function scenarioFromFile(file: string): Promise<unknown> {
  // As serve reads one: a regular file under the size cap, every YAML error (alias bombs too) one message.
  const { readYamlFile } = await import('../../mock-server/config/load-config.ts');
  return readYamlFile(file);
}

/** `admin scenarios list | load`: the bundled scenarios, the one in force, loading one. */
export function registerScenarios(admin: Command) {
  const scenarios = admin.command('scenarios').description('the bundled scenarios, and the one in force');
  connected(
    scenarios.command('list', { isDefault: true }).description('list the bundled scenarios (* in force)'),
  ).action(async (options: ConnectionOptions) => {
    const target = targetOf(options);
    const [list, current] = await Promise.all([
      adminCall<{ scenarios: { name: string; description: string }[] }>(target, 'GET', '/__admin/scenarios'),
      adminCall<{ scenario: { name: string; description: string; source: string } | null }>(
        target,
        'GET',
        '/__admin/scenario',
      ),
    ]);
    print(options, { ...list, in_force: current.scenario }, () => {
      const name = current.scenario?.name;
      const rows = list.scenarios.map(
        (s) => `${s.name === name ? '*' : ' '} ${s.name.padEnd(24)} ${s.description}`,
      );
      const inForce = current.scenario
        ? `In force: ${current.scenario.name} (${current.scenario.source})`
        : 'In force: none (the base config)';
      return plain([...rows, '', inForce].join('\n'));
    });
  });
  connected(
    scenarios
      .command('load <scenario>')
      .description('load a bundled scenario by name, or a scenario file (YAML or JSON); resets first'),
  ).action(async (scenario: string, options: ConnectionOptions) => {
    const target = targetOf(options);
    const looksLikeFile = /[/\\.]/.test(scenario);
    const body = looksLikeFile ? { scenario: await scenarioFromFile(scenario) } : { name: scenario };
    const loaded = await adminCall<{ scenario: { name: string; description: string }; clock: ClockState }>(
      target,
      'POST',
      '/__admin/scenario',
      body,
    );
    print(options, loaded, (a) =>
      plain(`Loaded ${a.scenario.name}: ${a.scenario.description}\nClock: ${clockLine(a.clock)}`),
    );
  });
}
