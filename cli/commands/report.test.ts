import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerAdminCommand } from './admin.ts';
import { agentOf, printReport, registerReportCommand } from './report.ts';

/** The commands as the CLI registers them: `report` on the program, its alias under `admin`. */
function commands() {
  const program = new Command();
  registerReportCommand(program);
  registerAdminCommand(program);
  const report = program.commands.find((c) => c.name() === 'report');
  const admin = program.commands.find((c) => c.name() === 'admin');
  const alias = admin?.commands.find((c) => c.name() === 'report');
  if (!report || !alias) throw new Error('report commands missing');
  return { report, alias };
}

const shape = (command: Command) => ({
  arguments: command.registeredArguments.map((a) => `${a.name()} ${a.required ? 'required' : 'optional'}`),
  options: command.options.map((o) => ({
    flags: o.flags,
    required: o.mandatory,
    default: o.defaultValue as unknown,
  })),
});

describe('one report command: `report` and `admin report`', () => {
  it('take the same argument and flags with the same defaults', () => {
    const { report, alias } = commands();
    expect(shape(alias)).toEqual(shape(report));
    const baseUrl = report.options.find((o) => o.long === '--base-url');
    expect(baseUrl?.defaultValue).toBe('http://127.0.0.1:8787');
    expect(report.options.some((o) => o.long === '--retry-cap')).toBe(true);
  });

  it('takes the agent as the argument or --agent, and refuses none or two different ones', () => {
    expect(agentOf('agent-early', undefined)).toBe('agent-early');
    expect(agentOf(undefined, 'agent-early')).toBe('agent-early');
    expect(agentOf('agent-early', 'agent-early')).toBe('agent-early');
    expect(() => agentOf(undefined, undefined)).toThrow('Give the agent');
    expect(() => agentOf('a', 'b')).toThrow('Two agents');
  });
});

describe("the report's exit code: the report's own verdict (unobservedRules)", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });

  /** The exit code `report` sets for a served report with these rules and violations. */
  async function exitFor(rules: { id: string; unobserved?: string }[], violations: unknown[] = []) {
    const report = {
      schema_version: 1,
      agent: 'a',
      requests: 3,
      options: { retryCap: 6, graceMs: 100, maxConcurrencyAfter429: 2, quietMs: 1000 },
      rules: rules.map((r) => ({ title: r.id, spec_ref: '§7', violations: 0, ...r })),
      violations,
      timeline: 'What a did (3 requests):',
    };
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify(report), { status: 200 }));
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    process.exitCode = undefined;
    await printReport({ baseUrl: 'http://127.0.0.1:1', adminKey: 'k', agent: 'a' });
    return process.exitCode;
  }

  it('0 when every rule was observed and kept, 2 when one was not observed, 1 on a violation', async () => {
    expect(await exitFor([{ id: 'honor-retry-after' }])).toBe(0);
    expect(await exitFor([{ id: 'honor-retry-after' }, { id: 'no-secrets', unobserved: 'no key' }])).toBe(2);
    // An empty reason is still a reason: the rule was not observed (what unobservedRules says).
    expect(await exitFor([{ id: 'no-secrets', unobserved: '' }])).toBe(2);
    const violation = { rule: 'honor-retry-after', spec_ref: '§7', message: 'early', count: 1, requests: [] };
    expect(await exitFor([{ id: 'no-secrets', unobserved: 'no key' }], [violation])).toBe(1);
  });
});
