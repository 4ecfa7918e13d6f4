import { InvalidArgumentError } from 'commander';
import type { JournalEntry } from '../../mock-server/journal/journal.ts';
import type { Fault } from '../../mock-server/scenarios/faults.ts';
import { plain } from './admin-connection.ts';

// How the admin commands show the admin API's answers as text (--json prints them as they are).

/** Rows as aligned columns, control characters shown rather than obeyed. */
export const table = (rows: string[][]) => {
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

export interface ClockState {
  now: number;
  time: string;
  frozen: boolean;
  /** How many times the clock was moved back (absent from gateways older than epochs). */
  epoch?: number;
}
export const clockLine = (c: ClockState) =>
  `${c.time} (${c.frozen ? 'frozen' : 'running'}${c.epoch ? `, epoch ${c.epoch}: moved back ${c.epoch === 1 ? 'once' : `${c.epoch} times`}` : ''})`;

/** `10s`, `1500ms`, `2m`, `1h` or a number of seconds, as milliseconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError('give a duration such as 10s, 1500ms, 2m, 1h (or seconds)');
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 's'] as number;
  return Math.round(Number(match[1]) * unit);
}

export const faultLine = (f: Fault) => {
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

export const entryLine = (e: JournalEntry) => [
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

export interface AgentView {
  id: string;
  name: string;
  api_key: string;
  tier: string;
  allowlist: string[];
  disabled: boolean;
}
export const agentRows = (agents: AgentView[]) =>
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

export const toolList = (value: string) =>
  value
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
