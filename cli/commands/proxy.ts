import type { Command } from 'commander';
import { baseUrlOption, EXIT, intOption } from '../cli-options.ts';
import { addOptionFlags, valuesAt } from '../option-flags.ts';
import { PROXY_OPTION_ROWS } from '../option-tables.ts';
import {
  type ListenOptions,
  listenerAdminKey,
  stopWhenStdinCloses,
  throwIfPortInUse,
  withListenOptions,
} from './listening.ts';

interface ProxyCommandOptions extends ListenOptions {
  target: string;
  config?: string;
  adminKey?: string;
  journalBodyBytes?: number;
  connectTimeoutMs?: number;
  firstByteTimeoutMs?: number;
  idleTimeoutMs?: number;
  keepField?: string[];
  apiKey?: Record<string, string>;
  apiKeysFile?: string;
}

/** `--api-key agent-id=key`, repeatable: collected into one object. */
const collectKey = (value: string, keys: Record<string, string> = {}) => {
  const at = value.indexOf('=');
  if (at <= 0) throw new Error(`--api-key takes agent-id=key, got "${value.slice(0, 20)}…"`);
  return { ...keys, [value.slice(0, at)]: value.slice(at + 1) };
};

/** `--keep-field NAME`, repeatable (and comma-separated): the names gathered. */
const keepFields = (value: string, previous: string[] | undefined) => [
  ...(previous ?? []),
  ...value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean),
];

/**
 * `agent-gateway proxy --target URL`: sits between an agent and a real gateway, forwards every request and
 * streams every answer back unchanged (hop-by-hop headers apart), journals each exchange with the facts the
 * client report grades, judges the target's answers passively, and applies armed faults.
 */
export function registerProxyCommand(program: Command) {
  const command = withListenOptions(
    program
      .command('proxy')
      .description(
        'forward to a real gateway (--target), grade the agent and judge the gateway from the traffic',
      )
      .requiredOption(
        '-t, --target <url>',
        "the target gateway's base URL (http:// or https://)",
        baseUrlOption,
      ),
    8788,
  )
    .option(
      '-c, --config <file>',
      'YAML or JSON config laid over the bundled default: journal (capacity, body_bytes) and server hardening',
    )
    .option(
      '--journal-body-bytes <n>',
      'bytes of each request and response body the journal keeps, with headers (0: none; default journal.body_bytes, 2048)',
      intOption(0, 1_048_576),
    )
    .option(
      '--api-key <agent=key>',
      "an agent's own API key (repeatable), so the report finds a leak of it as the agent's own; otherwise learned from POST /idp/token through the proxy, or the own-key check is reported not observed",
      collectKey,
    )
    .option(
      '--api-keys-file <file>',
      'a file of agents\' API keys: a JSON object {"agent-id": "key"} or lines agent-id=key',
    )
    .option(
      '--admin-key <key>',
      'enable the admin API (journal, report, findings, faults, clock, export) under /__admin, 8 characters or more (a blank one is refused); prefer $AGENT_GATEWAY_ADMIN_KEY',
    );
  // The deadlines and the kept fields, from their one declaration (mock-server/proxy/proxy-options.ts).
  addOptionFlags(
    command,
    PROXY_OPTION_ROWS,
    { keepField: { placeholder: 'name', parse: keepFields as (value: string) => unknown } },
    { defaultInHelpOnly: true },
  ).action(async (options: ProxyCommandOptions) => {
    const adminKey = listenerAdminKey(options.adminKey);
    const [{ serve }, { createProxy }, { DEFAULT_CONFIG_FILE, loadConfig }] = await Promise.all([
      import('../../mock-server/adapters/node-server.ts'),
      import('../../mock-server/proxy/proxy.ts'),
      import('../../mock-server/config/load-config.ts'),
    ]);
    const config = loadConfig({
      file: options.config ?? DEFAULT_CONFIG_FILE,
      config:
        options.journalBodyBytes === undefined
          ? undefined
          : { journal: { body_bytes: options.journalBodyBytes } },
    });
    const proxy = createProxy({
      target: options.target,
      adminKey,
      config,
      apiKeys: options.apiKey,
      apiKeysFile: options.apiKeysFile,
      ...valuesAt(PROXY_OPTION_ROWS, options as unknown as Record<string, unknown>),
    });
    const server = await serve(proxy, { port: options.port, host: options.host }).catch(
      (error: NodeJS.ErrnoException) => {
        throwIfPortInUse(error, options);
        throw error;
      },
    );
    const target = proxy.target.href.replace(/\/$/, '');
    process.stdout.write(
      [
        `Agent Tool Gateway proxy listening on ${server.url}`,
        `  forwarding to: ${target} (answers passed through unchanged, hop-by-hop headers apart)`,
        `  journal: the last ${config.journal.capacity} exchanges, ${config.journal.body_bytes} bytes of each body kept (redacted${proxy.keptFields.length > 0 ? `; kept as sent: ${proxy.keptFields.join(', ')}` : ''})`,
        `  deadlines on the target: connect ${proxy.deadlines.connectTimeoutMs} ms, first byte ${proxy.deadlines.firstByteTimeoutMs} ms, idle ${proxy.deadlines.idleTimeoutMs} ms (then a JSON 504 upstream_timeout)`,
        adminKey
          ? `  admin API: ${server.url}/__admin (send X-Admin-Key): journal, report, findings, faults, clock, export; dashboard ${server.url}/__admin/ui`
          : '  admin API: off (pass --admin-key or set AGENT_GATEWAY_ADMIN_KEY to read reports and findings)',
        '',
        'Point your agent at the proxy instead of the gateway, then:',
        `  npx agent-gateway report --agent <agent id> --base-url ${server.url}`,
        `  npx agent-gateway admin findings --base-url ${server.url}`,
        '',
        'Press Ctrl+C to stop.',
        '',
      ].join('\n'),
    );
    const stop = async () => {
      process.stdout.write('\nStopping.\n');
      await server.close();
      proxy.close();
      process.exit(EXIT.ok);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    stopWhenStdinCloses(options.exitWithStdin, () => void stop());
  });
}
