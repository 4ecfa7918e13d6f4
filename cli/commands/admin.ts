import { type Command, InvalidArgumentError, Option } from 'commander';
import type { ClientReport } from '../../mock-server/client-report/report.ts';
import type { JournalEntry } from '../../mock-server/journal/journal.ts';
import type { Fault } from '../../mock-server/scenarios/faults.ts';
import { SPEC_ENDPOINT_IDS } from '../../spec/endpoints.ts';
import { adminCall } from '../admin-client.ts';
import { CliError, EXIT, intOption } from '../cli-options.ts';
import { type ConnectionOptions, connected, plain, print, targetOf } from './admin-connection.ts';
import { registerExchangeCommands } from './admin-exchanges.ts';

const table = (rows: string[][]) => {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((r) =>
      plain(
        r
          .map((cell, i) => cell.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd(),
      ),
    )
    .join('\n');
};

interface ClockState {
  now: number;
  time: string;
  frozen: boolean;
}
const clockLine = (c: ClockState) => `${c.time} (${c.frozen ? 'frozen' : 'running'})`;

/** `10s`, `1500ms`, `2m`, `1h` or a number of seconds, as milliseconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError('give a duration such as 10s, 1500ms, 2m, 1h (or seconds)');
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 's'] as number;
  return Math.round(Number(match[1]) * unit);
}

const faultLine = (f: Fault) => {
  const what =
    f.kind === 'status'
      ? `${f.status}${f.retry_after !== undefined ? ` (Retry-After ${f.retry_after})` : ''}`
      : f.kind === 'delay'
        ? `delay ${f.delay_ms} ms`
        : 'drop the connection';
  const where = `${f.match.operation ?? 'any operation'}, ${f.match.agent ? `agent ${f.match.agent}` : 'any agent'}`;
  const when = `${f.every > 1 ? `every ${f.every}th` : 'every'} match, ${f.count === undefined ? 'forever' : `${f.count} time(s)`}`;
  return [f.id, what, where, when, `seen ${f.seen}, fired ${f.fired}`];
};

const entryLine = (e: JournalEntry) => [
  `#${e.seq}`,
  e.time.slice(11, 23),
  e.agent ?? '-',
  `${e.method} ${e.path}`,
  `${e.status === 0 ? 'dropped' : e.status}${e.code ? ` ${e.code}` : ''}`,
  [
    e.retry_after !== undefined ? `Retry-After ${e.retry_after}` : '',
    e.fault ? `fault ${e.fault}` : '',
    e.limit ? `rule ${e.limit.rule}` : '',
    e.query ?? e.url ?? '',
  ]
    .filter(Boolean)
    .join('  '),
];

interface AgentView {
  id: string;
  name: string;
  api_key: string;
  tier: string;
  allowlist: string[];
  disabled: boolean;
}
const agentRows = (agents: AgentView[]) =>
  table([
    ['ID', 'TIER', 'ALLOWLIST', 'DISABLED', 'API KEY', 'NAME'],
    ...agents.map((a) => [
      a.id,
      a.tier,
      a.allowlist.join(',') || '-',
      a.disabled ? 'yes' : 'no',
      a.api_key,
      a.name,
    ]),
  ]);

const toolList = (value: string) =>
  value
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

/** Reads a scenario file (YAML or JSON) to send inline: the admin API reads no files, the CLI can. */
async function scenarioFromFile(file: string): Promise<unknown> {
  // As serve reads one: a regular file under the size cap, every YAML error (alias bombs too) one message.
  const { readYamlFile } = await import('../../mock-server/config/load-config.ts');
  return readYamlFile(file);
}

function registerScenarios(admin: Command) {
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

function registerClock(admin: Command) {
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

interface ArmOptions extends ConnectionOptions {
  kind: 'status' | 'delay' | 'drop';
  operation?: string;
  agent?: string;
  status?: number;
  retryAfter?: number;
  delayMs?: number;
  count?: number;
  every?: number;
}

function registerFaults(admin: Command) {
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
  connected(
    faults
      .command('arm')
      .description(
        'arm a fault: a 5xx, a delay or a dropped connection, on the next --count matching requests',
      )
      .addOption(
        new Option('--kind <kind>', 'what it does')
          .choices(['status', 'delay', 'drop'])
          .makeOptionMandatory(),
      )
      .addOption(new Option('--operation <op>', 'only this endpoint').choices(SPEC_ENDPOINT_IDS))
      .option('--agent <id>', 'only this agent')
      .option('--status <code>', 'for --kind status: 500, 502, 503 or 504 (default 503)', (value: string) => {
        if (!['500', '502', '503', '504'].includes(value))
          throw new InvalidArgumentError('must be 500, 502, 503 or 504');
        return Number(value);
      })
      .option('--retry-after <s>', 'Retry-After seconds on the 5xx', intOption(0, 86_400))
      .option('--delay-ms <ms>', 'for --kind delay (default 1000)', intOption(0, 120_000))
      .option(
        '--count <n>',
        'strike this many times, then disarm (a status or drop fault needs it, or --every)',
        intOption(1, 1_000_000),
      )
      .option('--every <n>', 'strike the 1st matching request, then every n-th', intOption(1, 1_000_000)),
  ).action(async (options: ArmOptions) => {
    const match = {
      ...(options.operation && { operation: options.operation }),
      ...(options.agent && { agent: options.agent }),
    };
    const body = {
      kind: options.kind,
      ...(Object.keys(match).length > 0 && { match }),
      ...(options.status !== undefined && { status: options.status }),
      ...(options.retryAfter !== undefined && { retry_after: options.retryAfter }),
      ...(options.delayMs !== undefined && { delay_ms: options.delayMs }),
      ...(options.count !== undefined && { count: options.count }),
      ...(options.every !== undefined && { every: options.every }),
    };
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

interface AgentOptions extends ConnectionOptions {
  name?: string;
  tier?: string;
  allowlist?: string[];
  apiKey?: string;
  disabled?: boolean;
}

function registerAgents(admin: Command) {
  const agents = admin.command('agents').description('agents of the identity provider');
  const one = (a: AgentView) => agentRows([a]);
  const withFields = (command: Command) =>
    command
      .option('--name <name>', 'display name')
      .option('--tier <tier>', 'policy tier, e.g. early_access or verified')
      .option('--allowlist <tools>', 'tools allowed beyond the tier, comma-separated (empty: none)', toolList)
      .option('--disabled', 'disable the agent (its tokens stop working)')
      .option('--no-disabled', 'enable it again');
  const fields = (o: AgentOptions) => ({
    ...(o.name !== undefined && { name: o.name }),
    ...(o.tier !== undefined && { tier: o.tier }),
    ...(o.allowlist !== undefined && { allowlist: o.allowlist }),
    ...(o.disabled !== undefined && { disabled: o.disabled }),
  });
  const at = (id: string) => `/__admin/agents/${encodeURIComponent(id)}`;

  connected(agents.command('list', { isDefault: true }).description('every agent, with its API key')).action(
    async (options: ConnectionOptions) => {
      const answer = await adminCall<{ agents: AgentView[] }>(targetOf(options), 'GET', '/__admin/agents');
      print(options, answer, (a) => agentRows(a.agents));
    },
  );
  connected(agents.command('show <id>').description('one agent')).action(
    async (id: string, options: ConnectionOptions) => {
      print(options, await adminCall<AgentView>(targetOf(options), 'GET', at(id)), one);
    },
  );
  connected(
    withFields(
      agents.command('create <id>').description('add an agent (tier: the default tier unless given)'),
    ).option('--api-key <key>', 'its API key (default: a random one, printed)'),
  ).action(async (id: string, options: AgentOptions) => {
    const body = { id, ...fields(options), ...(options.apiKey !== undefined && { api_key: options.apiKey }) };
    print(options, await adminCall<AgentView>(targetOf(options), 'POST', '/__admin/agents', body), one);
  });
  connected(
    withFields(agents.command('update <id>').description('change an agent, at once for its tokens')),
  ).action(async (id: string, options: AgentOptions) => {
    const body = fields(options);
    if (Object.keys(body).length === 0)
      throw new CliError('Nothing to change: give --name, --tier, --allowlist, --disabled or --no-disabled.');
    print(options, await adminCall<AgentView>(targetOf(options), 'PATCH', at(id), body), one);
  });
  connected(
    agents.command('revoke-tokens <id>').description('every token the agent holds stops working'),
  ).action(async (id: string, options: ConnectionOptions) => {
    print(
      options,
      await adminCall<AgentView>(targetOf(options), 'POST', `${at(id)}/revoke-tokens`),
      (a) => `Revoked the tokens of ${a.id}.`,
    );
  });
  connected(
    agents.command('token <id>').description('mint a token for the agent (the token is the last line)'),
  ).action(async (id: string, options: ConnectionOptions) => {
    const minted = await adminCall<{ token: string; agent_id: string; expires_at: string }>(
      targetOf(options),
      'POST',
      `${at(id)}/tokens`,
    );
    if (!options.json) process.stderr.write(`Token for ${minted.agent_id}, expires ${minted.expires_at}:\n`);
    print(options, minted, (m) => m.token);
  });
}

interface JournalOptions extends ConnectionOptions {
  agent?: string;
  since?: number;
  limit?: number;
}

/** A page of GET /__admin/journal: at most 1,000 entries; `more` says to page on from `next_since`. */
interface JournalPageAnswer {
  capacity: number;
  dropped: number;
  entries: JournalEntry[];
  more?: boolean;
  next_since?: number;
}

function registerJournal(admin: Command) {
  const journal = admin.command('journal').description('the requests the gateway saw');
  connected(
    journal
      .command('list', { isDefault: true })
      .description('recent requests, oldest first')
      .option('--agent <id>', "only this agent's requests")
      .option('--since <seq>', 'only after this sequence number', intOption(0, Number.MAX_SAFE_INTEGER))
      .option('--limit <n>', 'only the most recent n', intOption(1, 1_000_000)),
  ).action(async (options: JournalOptions) => {
    const query = new URLSearchParams();
    if (options.agent !== undefined) query.set('agent', options.agent);
    if (options.since !== undefined) query.set('since', String(options.since));
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    const answer = await adminCall<JournalPageAnswer>(
      targetOf(options),
      'GET',
      `/__admin/journal${query.size > 0 ? `?${query}` : ''}`,
    );
    print(options, answer, (a) => {
      const dropped = a.dropped > 0 ? ` (${a.dropped} older ones dropped; capacity ${a.capacity})` : '';
      const more = a.more
        ? `\nMore after seq ${a.next_since}: --since ${a.next_since}, or \`admin journal export\` for all.`
        : '';
      if (a.entries.length === 0) return `No request${dropped}.${more}`;
      return `${table(a.entries.map(entryLine))}\n\n${a.entries.length} request(s)${dropped}.${more}`;
    });
  });
  connected(
    journal
      .command('export')
      .description('every request, as NDJSON (one JSON entry a line) on stdout, read page by page')
      .option('--agent <id>', "only this agent's requests")
      .option('--since <seq>', 'only after this sequence number', intOption(0, Number.MAX_SAFE_INTEGER)),
  ).action(async (options: JournalOptions) => {
    const target = targetOf(options);
    let since = options.since;
    for (;;) {
      const query = new URLSearchParams();
      if (options.agent !== undefined) query.set('agent', options.agent);
      if (since !== undefined) query.set('since', String(since));
      const page = await adminCall<JournalPageAnswer>(
        target,
        'GET',
        `/__admin/journal${query.size > 0 ? `?${query}` : ''}`,
      );
      const lines = page.entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
      // Written as it arrives, waiting for stdout to drain: memory holds one page, whatever the journal.
      if (lines && !process.stdout.write(lines))
        await new Promise((resolve) => process.stdout.once('drain', resolve));
      if (!page.more) break;
      since = page.next_since;
    }
  });
  connected(journal.command('clear').description('empty the journal')).action(
    async (options: ConnectionOptions) => {
      print(
        options,
        await adminCall(targetOf(options), 'DELETE', '/__admin/journal'),
        () => 'Journal cleared.',
      );
    },
  );
}

/**
 * `agent-gateway admin ...`: the admin API of a running reference gateway from the command line, so QA
 * never needs curl: scenarios, the clock, faults, agents, the journal, reset, limits, tools and the client
 * report. `--json` prints the admin API's answer; exit 0 done, 1 (report) violations, 2 could not.
 */
export function registerAdminCommand(program: Command) {
  const admin = program
    .command('admin')
    .description(
      'drive a running gateway through its admin API: scenarios, clock, faults, agents, journal, reset',
    )
    .addHelpText(
      'after',
      '\nEvery subcommand takes --base-url (default http://127.0.0.1:8787), --admin-key (default\n$AGENT_GATEWAY_ADMIN_KEY) and --json. Exit codes: 0 done, 1 the report found violations, 2 could not.\n\nExamples:\n  export AGENT_GATEWAY_ADMIN_KEY=qa-secret-key\n  npx --no-install agent-gateway admin scenarios load burst-429\n  npx --no-install agent-gateway admin clock advance 10s\n  npx --no-install agent-gateway admin faults arm --kind status --status 503 --operation web.search --count 2\n  npx --no-install agent-gateway admin journal --agent agent-verified --limit 20\n  npx --no-install agent-gateway admin report agent-verified\n',
    );
  registerScenarios(admin);
  registerClock(admin);
  registerFaults(admin);
  registerAgents(admin);
  registerJournal(admin);
  registerExchangeCommands(admin);

  connected(
    admin
      .command('reset')
      .description('back to how serve started: its config and --scenario; faults and journal cleared'),
  ).action(async (options: ConnectionOptions) => {
    const answer = await adminCall<{ clock: ClockState }>(targetOf(options), 'POST', '/__admin/reset');
    print(options, answer, (a) => `Reset. Clock: ${clockLine(a.clock)}`);
  });
  connected(admin.command('limits').description('the rate limits in force')).action(
    async (options: ConnectionOptions) => {
      const limits = await adminCall<{
        retry_after: string;
        rules: {
          name: string;
          scope: string;
          algorithm: string;
          limit: number;
          window_seconds: number;
          operations?: string[];
        }[];
        concurrency: { per_agent?: number | null };
      }>(targetOf(options), 'GET', '/__admin/limits');
      print(options, limits, (l) =>
        [
          l.rules.length === 0
            ? 'No rate-limit rule.'
            : table([
                ['RULE', 'SCOPE', 'ALGORITHM', 'LIMIT', 'OPERATIONS'],
                ...l.rules.map((r) => [
                  r.name,
                  r.scope,
                  r.algorithm,
                  `${r.limit} per ${r.window_seconds} s`,
                  r.operations?.join(',') ?? 'whoami,web.search,web.fetch',
                ]),
              ]),
          `Retry-After as ${l.retry_after}; concurrency per agent: ${l.concurrency.per_agent ?? 'no limit'}`,
        ].join('\n'),
      );
    },
  );
  connected(admin.command('tools').description('the tools and who may call them')).action(
    async (options: ConnectionOptions) => {
      const answer = await adminCall<{
        tools: Record<string, { tiers: string[]; enabled: boolean; latency_ms: number }>;
      }>(targetOf(options), 'GET', '/__admin/tools');
      print(options, answer, (a) =>
        table([
          ['TOOL', 'ENABLED', 'TIERS', 'LATENCY'],
          ...Object.entries(a.tools).map(([name, t]) => [
            name,
            t.enabled ? 'yes' : 'no',
            t.tiers.join(',') || '-',
            `${t.latency_ms} ms`,
          ]),
        ]),
      );
    },
  );
  connected(
    admin
      .command('report <agent>')
      .description("grade an agent against the spec's client safety rules (like `report`)"),
  ).action(async (agent: string, options: ConnectionOptions) => {
    const report = await adminCall<ClientReport>(
      targetOf(options),
      'GET',
      `/__admin/report?${new URLSearchParams({ agent })}`,
    );
    const { formatClientReport, nothingToGrade } = await import('../../mock-server/client-report/report.ts');
    print(options, report, formatClientReport);
    if (report.requests === 0) throw new CliError(nothingToGrade(agent));
    process.exitCode = report.violations.length > 0 ? EXIT.failed : EXIT.ok;
  });
}
