import { describe, expect, it } from 'vitest';
import { compose, type Stage } from './compose.ts';

interface State {
  seen: string[];
  settled?: boolean;
}

const note =
  (name: string, answer?: string): Stage<State, string> =>
  (state) => {
    state.seen.push(name);
    return answer;
  };
const later =
  (name: string, answer?: string): Stage<State, string> =>
  async (state) => {
    await Promise.resolve();
    state.seen.push(name);
    return answer;
  };
const settle = (state: State) => {
  state.settled = true;
};

describe('compose (a route as its list of stages)', () => {
  it('runs synchronous stages in order and answers at once, without a promise', () => {
    const state: State = { seen: [] };
    const answer = compose([note('a'), note('b'), note('c', 'done')], settle)(state);
    expect(answer).toBe('done');
    expect(state).toEqual({ seen: ['a', 'b', 'c'], settled: true });
  });

  it('stops at the first stage that answers', () => {
    const state: State = { seen: [] };
    expect(compose([note('a'), note('b', 'refused'), note('c', 'done')])(state)).toBe('refused');
    expect(state.seen).toEqual(['a', 'b']);
  });

  it('waits for a stage that returns a promise, then goes on, and settles after the answer', async () => {
    const state: State = { seen: [] };
    const answer = compose([note('a'), later('b'), note('c', 'done')], settle)(state);
    expect(answer).toBeInstanceOf(Promise);
    expect(state.settled).toBeUndefined();
    await expect(answer).resolves.toBe('done');
    expect(state).toEqual({ seen: ['a', 'b', 'c'], settled: true });
  });

  it('settles when a stage throws or rejects, and passes the error on', async () => {
    const boom: Stage<State, string> = () => {
      throw new Error('refused');
    };
    const sync: State = { seen: [] };
    expect(() => compose([note('a'), boom], settle)(sync)).toThrow('refused');
    expect(sync.settled).toBe(true);
    const rejects: Stage<State, string> = async () => {
      throw new Error('later');
    };
    const async: State = { seen: [] };
    await expect(compose([later('a'), rejects], settle)(async)).rejects.toThrow('later');
    expect(async.settled).toBe(true);
  });

  it('refuses a list whose last stage does not answer', () => {
    expect(() => compose([note('a')])({ seen: [] })).toThrow('must');
  });
});
