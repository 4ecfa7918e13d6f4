import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerAdminCommand } from './admin.ts';
import { agentOf, registerReportCommand } from './report.ts';

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
