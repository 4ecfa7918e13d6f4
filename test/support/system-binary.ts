import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';

/** A Debian package binary some tests drive for real (Chromium, redis-server), and how to get it. */
export interface SystemBinary {
  /** What the tests call it in messages: `Chromium`, `redis-server`. */
  what: string;
  /** Its path (the Debian package's, or one an environment variable names). */
  path: string;
  /** The variable .ci/run sets to 1 so that in CI a missing binary fails instead of skipping. */
  requireEnv: string;
  /** How to install it, for the skip and failure messages. */
  install: string;
}

/**
 * A describe block for tests that need `binary`. Without it the block is skipped, loudly (saying how to
 * install it); with its `requireEnv` set to 1 (CI) a missing binary is a failing test instead.
 */
export function describeNeeding(binary: SystemBinary, kind: string, name: string, body: () => void) {
  if (existsSync(binary.path)) {
    describe(name, body);
    return;
  }
  if (process.env[binary.requireEnv] === '1') {
    describe(name, () => {
      it(`needs ${binary.what}`, () => {
        throw new Error(`No ${binary.what} at ${binary.path}, and ${binary.requireEnv}=1: ${binary.install}`);
      });
    });
    return;
  }
  process.stderr.write(
    `\n*** SKIPPED ${kind} tests "${name}": no ${binary.what} at ${binary.path}. Install it: ${binary.install} ***\n\n`,
  );
  describe.skip(name, body);
}
