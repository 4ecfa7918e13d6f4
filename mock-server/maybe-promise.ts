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
 * without a tick when `body` answers synchronously.
 */
export function andFinally<T>(body: () => MaybePromise<T>, done: () => void): MaybePromise<T> {
  let result: MaybePromise<T>;
  try {
    result = body();
  } catch (error) {
    done();
    throw error;
  }
  if (result instanceof Promise) return result.finally(done);
  done();
  return result;
}
