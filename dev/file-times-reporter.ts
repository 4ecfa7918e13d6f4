/**
 * A vitest reporter for `npm run test:times`: when each test file started running and ended (wall clock,
 * taken in vitest's main process), with its state, written as JSON to $AGENT_GATEWAY_FILE_TIMES when the run
 * ends. Unlike vitest's JSON report (from its first test's start to its last test's end), a file's time here
 * includes its hooks (a `beforeAll` that starts servers or runs a whole catalogue) and its teardown.
 */
import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/** One test file's time in the run: epoch milliseconds, as vitest's main process saw them. */
export interface FileSpan {
  file: string;
  startTime: number;
  endTime: number;
  state: string;
}

export default class FileTimesReporter implements Reporter {
  private readonly started = new Map<string, number>();
  private readonly spans: FileSpan[] = [];

  onTestModuleStart(testModule: TestModule) {
    this.started.set(testModule.moduleId, Date.now());
  }

  onTestModuleEnd(testModule: TestModule) {
    const endTime = Date.now();
    this.spans.push({
      file: testModule.moduleId,
      startTime: this.started.get(testModule.moduleId) ?? endTime,
      endTime,
      state: testModule.state(),
    });
  }

  onTestRunEnd() {
    const out = process.env.AGENT_GATEWAY_FILE_TIMES;
    if (out) writeFileSync(out, `${JSON.stringify(this.spans, null, 2)}\n`);
  }
}
