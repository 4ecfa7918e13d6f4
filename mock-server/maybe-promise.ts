// Not named `then`: a module exporting `then` is a thenable, which `import()` would call.

/**
 * A value now, or a promise of it: what the state port and the stages return. In memory they answer
 * synchronously (the hot path waits no tick); on a shared store (Redis) they answer with a promise.
 */
export type MaybePromise<T> = T | Promise<T>;

/**
 * `fn(value)`, at once when `value` is not a promise, else once it settles: a `.then` that costs no tick
 * on the synchronous path. A throw from `fn` is thrown (sync) or rejects (async), as `await` would.
 *
 * @example
 * andThen(identify(deps, ctx), (identity) => admit(deps, ctx, identity, 'whoami'));
 */
export function andThen<T, U>(value: MaybePromise<T>, fn: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}

/**
 * Runs `body`, then `done` however it ends (a `try/finally` that also waits for a promise `body` returns),
 * without a tick when `body` answers synchronously. Both are handed `state`: functions made once, called
 * per request on the request's own state, allocate nothing per call on the synchronous path.
 */
export function andFinally<T, S = undefined>(
  body: (state: S) => MaybePromise<T>,
  done: (state: S) => void,
  state?: S,
): MaybePromise<T> {
  let result: MaybePromise<T>;
  try {
    result = body(state as S);
  } catch (error) {
    done(state as S);
    throw error;
  }
  if (result instanceof Promise) return result.finally(() => done(state as S));
  done(state as S);
  return result;
}
