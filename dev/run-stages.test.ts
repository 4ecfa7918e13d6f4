import { describe, expect, it } from 'vitest';
import {
  childrenCpuSeconds,
  chosenStages,
  lanesOf,
  MACHINE_LOAD_ENV,
  npmRunner,
  type RunOutcome,
  runStages,
  STAGES,
  type Stage,
  stageEnv,
  summary,
} from './run-stages.ts';

const three: Stage[] = [
  { name: 'first', script: 'a', lane: 'checks' },
  { name: 'second', script: 'b', lane: 'checks' },
  { name: 'third', script: 'c', lane: 'checks' },
];

/** A promise with its resolve function, to end a fake stage when the test says so. */
function gate() {
  let open: (outcome: RunOutcome) => void = () => undefined;
  const promise = new Promise<RunOutcome>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('the stage runner of npm test', () => {
  it('runs every stage after one fails, and reports each with its verdict', async () => {
    const ran: string[] = [];
    const lines: string[] = [];
    const exits: Record<string, number | string> = { first: 0, second: 1, third: 'SIGTERM' };
    const results = await runStages(
      three,
      async (stage) => {
        ran.push(stage.name);
        return { exit: exits[stage.name] as number | string, cpuSeconds: 1.5 };
      },
      (line) => lines.push(line),
    );
    expect(ran).toEqual(['first', 'second', 'third']);
    expect(results.map((r) => [r.name, r.passed, r.exit])).toEqual([
      ['first', true, 0],
      ['second', false, 1],
      ['third', false, 'SIGTERM'],
    ]);
    expect(lines.filter((l) => l.startsWith('== stage second:'))[0]).toMatch(
      /FAILED \(exit 1\) in \d+\.\d s, CPU 1\.5 s, load/,
    );
    const text = summary(results);
    expect(text).toMatch(/first +passed in/);
    expect(text).toMatch(/total +\d+\.\d s wall, CPU 4\.5 s/);
    expect(text).toMatch(/FAILED: second, third$/);
  });

  it('says all passed only when every stage did, and the CPU only when every stage told it', async () => {
    const results = await runStages(
      three,
      async () => ({ exit: 0 }),
      () => undefined,
    );
    expect(summary(results)).toMatch(/All stages passed\.$/);
    expect(summary(results)).toMatch(/first +passed in \d+\.\d s, CPU \?, load/);
    expect(summary(results)).not.toMatch(/wall, CPU/);
  });

  it("runs the lanes side by side, a lane's stages in order, and holds a side lane's output until its stage ends", async () => {
    const stages: Stage[] = [
      { name: 'check', script: 'a', lane: 'checks' },
      { name: 'slow', script: 'b', lane: 'checks' },
      { name: 'pack', script: 'c', lane: 'package' },
      { name: 'py', script: 'd', lane: 'package' },
    ];
    const gates = Object.fromEntries(stages.map((s) => [s.name, gate()]));
    const started: string[] = [];
    const outputs: Record<string, ((chunk: string) => void) | undefined> = {};
    const lines: string[] = [];
    const running = runStages(
      stages,
      (stage, output) => {
        started.push(stage.name);
        outputs[stage.name] = output;
        return gates[stage.name]?.promise as Promise<RunOutcome>;
      },
      (line) => lines.push(line),
    );
    await Promise.resolve();
    // One stage of each lane at once.
    expect(started).toEqual(['check', 'pack']);
    // The first lane writes to the terminal; the other's output is held.
    expect(outputs.check).toBeUndefined();
    expect(outputs.pack).toBeTypeOf('function');
    outputs.pack?.('packing\n');
    outputs.pack?.('packed\n');
    expect(lines.join('\n')).not.toContain('packing');
    gates.pack?.open({ exit: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    // The side lane goes on with its next stage whatever the first did, and prints the ended one whole.
    expect(started).toEqual(['check', 'pack', 'py']);
    const text = lines.join('\n');
    expect(text).toMatch(
      /== stage pack \(npm run c\): its output ==\npacking\npacked\n== stage pack: FAILED \(exit 1\)/,
    );
    expect(text).toMatch(/== stage pack \(npm run c\) started beside check, slow:/);
    gates.check?.open({ exit: 0 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['check', 'pack', 'py', 'slow']);
    gates.py?.open({ exit: 0 });
    gates.slow?.open({ exit: 0 });
    const results = await running;
    // In the order the stages were given, whatever order they ended in.
    expect(results.map((r) => [r.name, r.passed])).toEqual([
      ['check', true],
      ['slow', true],
      ['pack', false],
      ['py', true],
    ]);
    expect(summary(results, 12.5)).toMatch(/total +12\.5 s wall \(the stages' times add up to/);
  });

  it('runs every stage one after another, all to the terminal, with --serial', async () => {
    const order: string[] = [];
    const results = await runStages(
      STAGES,
      async (stage, output) => {
        order.push(stage.name);
        expect(output).toBeUndefined();
        return { exit: 0 };
      },
      () => undefined,
      { serial: true },
    );
    expect(order).toEqual(STAGES.map((s) => s.name));
    expect(results.every((r) => r.passed)).toBe(true);
  });

  it('keeps the two stages that build the Python gateway in one lane, apart from vitest', () => {
    expect(lanesOf(STAGES).map((lane) => lane.map((s) => s.name))).toEqual([
      ['typecheck', 'lint', 'vitest'],
      ['consumers', 'python'],
    ]);
  });

  it('runs the named stages only, and refuses an unknown name or option in one line', () => {
    expect(chosenStages([])).toEqual({ stages: STAGES, serial: false });
    expect(chosenStages(['--serial'])).toEqual({ stages: STAGES, serial: true });
    expect(chosenStages(['python', 'lint'])).toEqual({
      stages: [
        { name: 'python', script: 'test:python', lane: 'package' },
        { name: 'lint', script: 'lint', lane: 'checks' },
      ],
      serial: false,
    });
    expect(chosenStages(['lint', 'unit'])).toBe(
      'unknown stage unit: the stages are typecheck, lint, vitest, consumers, python',
    );
    expect(chosenStages(['--fast'])).toBe('unknown option --fast: the options are --serial');
  });

  it("reads the CPU time of a shell's children from its times builtin (dash and bash print it alike)", () => {
    expect(childrenCpuSeconds('0m0.010000s 0m0.002000s\n1m2.500000s 0m0.750000s\n')).toBeCloseTo(63.25);
    expect(childrenCpuSeconds('0m0.01s 0m0.00s\n0m3.25s 0m1.00s\n')).toBeCloseTo(4.25);
    expect(childrenCpuSeconds('')).toBeUndefined();
    expect(childrenCpuSeconds('0m0.01s 0m0.00s\nnot times\n')).toBeUndefined();
  });

  it('hands the stages the load from before they started, keeping one a caller gave', () => {
    const env = stageEnv({ PATH: '/bin' });
    expect(env.PATH).toBe('/bin');
    expect(Number(env[MACHINE_LOAD_ENV])).toBeGreaterThanOrEqual(0);
    expect(env[MACHINE_LOAD_ENV]).toMatch(/^\d+\.\d\d$/);
    expect(stageEnv({ [MACHINE_LOAD_ENV]: '0.25' })[MACHINE_LOAD_ENV]).toBe('0.25');
  });

  it.runIf(process.platform !== 'win32')(
    'measures a real stage: its exit code, its output held when asked, and CPU time from the shell',
    async () => {
      let held = '';
      // tsc refusing an option it does not know: a quick stage that fails, saying why.
      const outcome = await npmRunner(() => ['--no-such-option'])(
        { name: 'typecheck', script: 'typecheck', lane: 'package' },
        (chunk) => {
          held += chunk;
        },
      );
      expect(outcome.exit).toBe(1);
      expect(held).toMatch(/no-such-option/);
      expect(outcome.cpuSeconds).toBeGreaterThan(0);
    },
  );
});
