/**
 * Tells a slow store from a gone one. A store is gone when it has sent nothing for the whole deadline while
 * work waited, and still sends nothing over the next few turns of this process's event loop (each turn reads
 * the I/O that is waiting). The turns matter on a busy machine: a reply can sit unread in the socket while
 * this process handles a burst, and Node runs timers before it reads sockets, so a deadline checked on its
 * timer alone blamed this process's own stall on a healthy store (503 state_store_unavailable under load).
 */
export interface StoreLiveness {
  /** A reply (any bytes) came from the store. */
  heard(): void;
  /**
   * Calls back `silent: true` when nothing was heard for `ms` (counted from `since` at the earliest: when
   * the wait began) and nothing arrives over the next `turns` loop turns; else with how long may pass before
   * it could be silent that long.
   */
  judge(ms: number, since: number, done: (verdict: SilenceVerdict) => void): void;
  readonly now: () => number;
}

export type SilenceVerdict = { silent: true } | { silent: false; retryInMs: number };

/**
 * After the deadline, how long (and at least how many loop turns, each of which waits for I/O up to its
 * timer) the store must stay silent before it counts as gone: time for a reply already sent to be read.
 */
export const CONFIRM_MS = 50;
export const SILENT_TURNS = 5;

export function createStoreLiveness(now: () => number = () => performance.now()): StoreLiveness {
  let heardAt = now();
  const quietFor = (since: number) => now() - Math.max(heardAt, since);
  return {
    now,
    heard() {
      heardAt = now();
    },
    judge(ms, since, done) {
      const quiet = quietFor(since);
      if (quiet < ms) return done({ silent: false, retryInMs: ms - quiet });
      const mark = heardAt;
      const started = now();
      let turns = 0;
      const turn = () => {
        if (heardAt !== mark) return done({ silent: false, retryInMs: Math.max(1, ms - quietFor(since)) });
        turns += 1;
        if (turns >= SILENT_TURNS && now() - started >= CONFIRM_MS) return done({ silent: true });
        setTimeout(turn, CONFIRM_MS / SILENT_TURNS);
      };
      // The first turn right after the I/O that is waiting now is read.
      setImmediate(turn);
    },
  };
}
