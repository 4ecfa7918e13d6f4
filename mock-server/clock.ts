/** The one source of time for every gateway decision: token expiry, rate-limit windows, Retry-After. */
export interface Clock {
  /** Milliseconds since the Unix epoch, like `Date.now()`. */
  now(): number;
}

/**
 * The latest time the clock can show, 9999-12-31T23:59:59.999Z: later instants have no four-digit-year
 * ISO 8601 form or HTTP-date, so every timestamp the gateway writes (journal, whoami, Date) would break.
 */
export const MAX_CLOCK_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A clock that can be frozen, advanced and set: the virtual clock of QA scenarios and tests. */
export interface VirtualClock extends Clock {
  /** Stops time at its current value. */
  freeze(): void;
  /** Lets time run again from its current value, at real speed. */
  resume(): void;
  /** Moves time forward by `ms` (frozen or running). */
  advance(ms: number): void;
  /** Jumps to an absolute time in ms since the epoch. */
  set(epochMs: number): void;
  /** Back to real time, running. */
  reset(): void;
  readonly frozen: boolean;
  /**
   * How many times the clock was moved back (`set` or `reset` into its own past, or a setting taken over
   * from another instance): 0 until then. Time only moves forward within an epoch, so the client report never
   * compares requests of different epochs as reactions or waits (the journal records each request's epoch).
   */
  readonly epoch: number;
  /** The clock's setting, to hand to another instance (shared store): an offset from real time, or frozen. */
  state(): ClockState;
  /** Takes over another instance's setting. */
  restore(state: ClockState): void;
}

/** A virtual clock's setting: running at real time plus `offset`, or stopped at `frozenAt`. */
export interface ClockState {
  offset: number;
  frozenAt?: number;
  /** Its epoch (see `VirtualClock.epoch`); absent from a setting written before epochs existed: 0. */
  epoch?: number;
}

/**
 * Creates the gateway clock: real time by default (`Date.now()` as it is at each call, so it follows a test
 * runner's fake timers whenever they were installed), frozen at `startAt` when `frozen` is set.
 * Time never goes backwards through `advance`; `set` may move it anywhere (QA decides), and moving it into
 * its past starts a new epoch (`epoch`).
 *
 * @example
 * const clock = createClock({ frozen: true, startAt: Date.parse('2026-01-01T00:00:00Z') });
 * clock.advance(10_000); // ten seconds later, no sleeping
 */
export function createClock(
  options: { frozen?: boolean; startAt?: number; realNow?: () => number } = {},
): VirtualClock {
  // Date.now looked up at each call, not when the clock was made: fake timers installed later
  // (vi.useFakeTimers(), jest's modern timers) move a gateway created at module scope too.
  const realNow = options.realNow ?? (() => Date.now());
  // Running: now = realNow() + offset. Frozen: now = frozenAt.
  // One reading of the real clock: two could differ by a millisecond, and a frozen clock would then start
  // a millisecond past `startAt`.
  const createdAt = realNow();
  let offset = options.startAt === undefined ? 0 : options.startAt - createdAt;
  let frozenAt: number | undefined = options.frozen ? createdAt + offset : undefined;

  const now = () => (frozenAt === undefined ? realNow() + offset : frozenAt);
  let epoch = 0;
  /** Runs a change of setting; a clock it moved into its own past starts a new epoch. */
  const moving = (change: () => void) => {
    const before = now();
    change();
    if (now() < before) epoch += 1;
  };

  return {
    now,
    freeze() {
      if (frozenAt === undefined) frozenAt = now();
    },
    resume() {
      if (frozenAt === undefined) return;
      offset = frozenAt - realNow();
      frozenAt = undefined;
    },
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0)
        throw new RangeError(`advance needs a finite, non-negative ms, got ${ms}`);
      if (now() + ms > MAX_CLOCK_MS)
        throw new RangeError(`advancing by ${ms} ms would pass ${new Date(MAX_CLOCK_MS).toISOString()}`);
      if (frozenAt === undefined) offset += ms;
      else frozenAt += ms;
    },
    set(epochMs) {
      if (!Number.isFinite(epochMs) || epochMs < 0 || epochMs > MAX_CLOCK_MS)
        throw new RangeError(
          `set needs an epoch in ms from 0 to ${MAX_CLOCK_MS} (${new Date(MAX_CLOCK_MS).toISOString()}), got ${epochMs}`,
        );
      moving(() => {
        if (frozenAt === undefined) offset = epochMs - realNow();
        else frozenAt = epochMs;
      });
    },
    reset() {
      moving(() => {
        offset = 0;
        frozenAt = undefined;
      });
    },
    get frozen() {
      return frozenAt !== undefined;
    },
    get epoch() {
      return epoch;
    },
    state: () => (frozenAt === undefined ? { offset, epoch } : { offset, frozenAt, epoch }),
    restore(state) {
      const counted = epoch;
      moving(() => {
        offset = state.offset;
        frozenAt = state.frozenAt;
      });
      // The instance that moved the clock counted the epoch: every instance takes its count over, and a
      // setting taken over a few ms after it was made (a clock frozen elsewhere) is no move of its own.
      if (state.epoch !== undefined) epoch = Math.max(counted, state.epoch);
    },
  };
}
