import { andFinally, type MaybePromise } from '../maybe-promise.ts';

/**
 * One stage of a route: it reads and writes the call's state, and either lets the call go on (returns
 * nothing) or ends it with an answer (a 403, a replayed answer, a fault, the tool's result). A stage that
 * waits (a shared store, a remote verifier, a slow tool) returns a promise of either.
 */
export type Stage<S, A> = (state: S) => MaybePromise<A | undefined>;

/**
 * Runs stages in order over one state, as hono's `compose` runs middleware: the first answer ends the
 * call, and `settle` runs however it ends (an answer, a thrown refusal, a rejected promise), e.g. to give
 * an in-flight slot back. Synchronous stages run without a tick and without a promise, so an in-memory
 * call is answered at once. The last stage must answer.
 *
 * @example
 * const call = compose([identifyStage, authorizeStage, answerStage], (state) => state.slot?.release());
 * call({ ctx }); // the answer, or a promise of it
 */
export function compose<S, A>(
  stages: readonly Stage<S, A>[],
  settle?: (state: S) => void,
): (state: S) => MaybePromise<A> {
  // A loop while the stages answer at once (no closure per stage and request on the in-memory path, nor
  // for the settling); from the first stage that waits, the rest once it has settled.
  const from = (state: S, index: number): MaybePromise<A> => {
    for (let i = index; i < stages.length; i++) {
      const result = (stages[i] as Stage<S, A>)(state);
      if (result instanceof Promise)
        return result.then((answer) => (answer === undefined ? from(state, i + 1) : answer));
      if (result !== undefined) return result;
    }
    throw new Error(`stage ${stages.length - 1} did not answer: the last stage of a route must`);
  };
  const start = (state: S) => from(state, 0);
  if (settle === undefined) return start;
  return (state) => andFinally(start, settle, state);
}
