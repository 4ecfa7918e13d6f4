import type { Command } from 'commander';
import type { Fault } from '../../mock-server/scenarios/faults.ts';
import { adminCall } from '../admin-client.ts';
import { addOptionFlags, valuesAt } from '../option-flags.ts';
import { FAULT_OPTION_ROWS } from '../option-tables.ts';
import { type ConnectionOptions, connected, print, targetOf } from './admin-connection.ts';
import { faultLine, table } from './admin-text.ts';

/** `admin faults list | arm | disarm`: injected faults. */
export function registerFaults(admin: Command) {
  const faults = admin.command('faults').description('injected faults');
  const list = (answer: { faults: Fault[] }) =>
    answer.faults.length === 0
      ? 'No fault armed.'
      : table([['ID', 'ANSWER', 'WHERE', 'WHEN', 'SO FAR'], ...answer.faults.map(faultLine)]);
  connected(faults.command('list', { isDefault: true }).description('the armed faults')).action(
    async (options: ConnectionOptions) => {
      print(options, await adminCall<{ faults: Fault[] }>(targetOf(options), 'GET', '/__admin/faults'), list);
    },
  );
  // The flags are the fault schema's fields (faultSpecSchema); the gateway fills in the defaults.
  connected(
    addOptionFlags(
      faults
        .command('arm')
        .description(
          'arm a fault: a 5xx, a delay or a dropped connection, on the next --count matching requests',
        ),
      FAULT_OPTION_ROWS,
      { operation: { placeholder: 'op' }, agent: { placeholder: 'id' } },
      { defaultInHelpOnly: true },
    ),
  ).action(async (options: ConnectionOptions & Record<string, unknown>) => {
    const body = valuesAt(FAULT_OPTION_ROWS, options);
    const fault = await adminCall<Fault>(targetOf(options), 'POST', '/__admin/faults', body);
    print(options, fault, (f) => `Armed ${table([faultLine(f)])}`);
  });
  connected(
    faults.command('disarm [id]').description('disarm one fault, or every fault without an id'),
  ).action(async (id: string | undefined, options: ConnectionOptions) => {
    const path = id ? `/__admin/faults/${encodeURIComponent(id)}` : '/__admin/faults';
    print(options, await adminCall<{ faults: Fault[] }>(targetOf(options), 'DELETE', path), list);
  });
}
