/**
 * Per-test marks: which of a gateway's journal entries the test now running made. A test grades its own
 * traffic, not the traffic of the tests before it on the same gateway (one gateway at module scope is the
 * usual pattern), so an agent that never reached the gateway in this test is never graded on what another
 * test's agent did.
 *
 * The runner entries (`testing/vitest`, `testing/jest`) tell this module which test is running (the
 * runner's own `expect.getState()`: test file and name, and a count bumped by a `beforeEach` so a retried
 * test is a new one). The msw handlers (`gatewayHandlers(gateway)`) note, at the first request a gateway
 * gets in a test, the journal's last sequence number then: that test's requests are the ones after it.
 * Journal sequence numbers only grow (a reset empties the journal, it does not restart the count), so a
 * `gateway.reset()` anywhere in the test changes nothing. Without a runner entry, or outside a test, there
 * is no mark: the caller says where to start with `since` (see `journalMark`).
 *
 * Kept on `globalThis` under a registered symbol: a runner can load the runner entry and the msw adapter
 * as two copies of this module (one inlined, one from node_modules); both must see the same marks.
 */
import type { Gateway } from './gateway.ts';
import type { MaybePromise } from './maybe-promise.ts';

/** What a runner says of the test now running. */
export interface RunningTest {
  /** The test's file. */
  path?: string;
  /** The test's full name; undefined between tests (in beforeAll, afterAll, at module scope). */
  name?: string;
}

interface MarkState {
  running: () => RunningTest | undefined;
  /** Bumped at each test's start by the runner entry's beforeEach: a retried or repeated test is a new one. */
  started: number;
  marks: WeakMap<Gateway, { test: string; seq: MaybePromise<number> }>;
  /** The gateways seen (handed to gatewayHandlers, graded, or requested through msw), to mark at each start. */
  known: Set<WeakRef<Gateway>>;
  isKnown: WeakSet<Gateway>;
}

const KEY = Symbol.for('agent-tool-gateway-harness.test-marks');
const holder = globalThis as typeof globalThis & { [KEY]?: MarkState };
const state: MarkState = holder[KEY] ?? {
  running: () => undefined,
  started: 0,
  marks: new WeakMap(),
  known: new Set(),
  isKnown: new WeakSet(),
};
holder[KEY] = state;

/**
 * Called once by a runner entry: how to read the test now running (vitest's or jest's expect.getState()).
 * Returns the reader it replaces.
 */
export function useRunningTest(read: () => RunningTest | undefined): () => RunningTest | undefined {
  const before = state.running;
  state.running = read;
  return before;
}

/**
 * Called by the runner entry's beforeEach: a test starts. Every gateway seen so far is marked at its
 * journal's last entry now, whatever way the test's requests then reach it (msw, `gateway.fetch`, HTTP).
 */
export function testStarted(): void {
  state.started++;
  const test = currentTest();
  for (const ref of state.known) {
    const gateway = ref.deref();
    if (!gateway) state.known.delete(ref);
    else if (test !== undefined) state.marks.set(gateway, { test, seq: journalMark(gateway) });
  }
}

/**
 * Makes a gateway known, so each test's start marks it; inside a test, marks it now (a gateway handed to
 * `server.use(...gatewayHandlers(gateway))` in the test: what came before is not this test's).
 */
export function trackGateway(gateway: Gateway, from: 'now' | 'start' = 'now'): void {
  if (state.isKnown.has(gateway)) return;
  state.isKnown.add(gateway);
  state.known.add(new WeakRef(gateway));
  const test = currentTest();
  if (test !== undefined) state.marks.set(gateway, { test, seq: from === 'now' ? journalMark(gateway) : 0 });
}

/** The test now running, as one key (file, name, start count), or undefined when none is (or none is known). */
function currentTest(): string | undefined {
  const test = state.running();
  if (!test?.name) return undefined;
  return `${test.path ?? ''}\u0000${test.name}\u0000${state.started}`;
}

/**
 * The journal's last sequence number now: `{ since: journalMark(gateway) }` grades only what came after.
 * Synchronous for a gateway in this process; a promise on a shared store (its journal is in the store).
 *
 * @example
 * const since = journalMark(gateway); // at the start of the test (node:test, mocha, a script)
 * await runMyAgent();
 * assertFollowsClientRules(gateway, 'agent-verified', { since });
 */
export function journalMark(gateway: Gateway): MaybePromise<number> {
  const last = (slice: { entries: readonly { seq: number }[] }) => slice.entries.at(-1)?.seq ?? 0;
  const newest = gateway.runtime.state.journal.list({ limit: 1 });
  return newest instanceof Promise ? newest.then(last) : last(newest);
}

/**
 * Called by the msw handlers before a request reaches the gateway: at the first request of a test, the
 * journal's last sequence number then marks where the test's own requests begin.
 */
export function noteRequest(gateway: Gateway): void {
  trackGateway(gateway);
  const test = currentTest();
  if (test === undefined || state.marks.get(gateway)?.test === test) return;
  state.marks.set(gateway, { test, seq: journalMark(gateway) });
}

/**
 * Where the current test's requests to this gateway begin, for the matchers: a sequence number (grade what
 * is after it), `'unmarked'` (a gateway seen before this test, with no mark for it: the runner entry's
 * beforeEach did not run for this test and no request came through the msw handlers), or `undefined`: no
 * test known to be running, or a gateway never seen before (made in this test): its whole journal.
 */
export function currentTestMark(gateway: Gateway): MaybePromise<number> | 'unmarked' | undefined {
  const test = currentTest();
  if (!state.isKnown.has(gateway)) {
    // First seen here, in this test: all of its journal is this test's (marked from the start).
    trackGateway(gateway, 'start');
    return undefined;
  }
  if (test === undefined) return undefined;
  const mark = state.marks.get(gateway);
  return mark?.test === test ? mark.seq : 'unmarked';
}
