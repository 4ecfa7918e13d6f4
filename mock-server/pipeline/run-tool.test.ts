import { describe, expect, it } from 'vitest';
import { serialiseAnswer } from './run-tool.ts';

describe('serialiseAnswer (the run-tool stage)', () => {
  it('serialises a frozen answer once: the same object again gets the same text and bytes', () => {
    const answer = Object.freeze({ query: 'café ☕', results: [{ title: 'a' }] });
    const first = serialiseAnswer(answer);
    expect(first.text).toBe(JSON.stringify(answer));
    expect(Buffer.from(first.bytes as Uint8Array).toString('utf8')).toBe(first.text);
    expect(first.bytes?.length).toBe(Buffer.byteLength(first.text));
    expect(serialiseAnswer(answer)).toBe(first);
    // An equal but distinct frozen object is its own answer.
    expect(serialiseAnswer(Object.freeze({ ...answer }))).not.toBe(first);
  });

  it('serialises any other answer each time, so a provider that changes its object in place is heard', () => {
    const answer = { count: 1 };
    const first = serialiseAnswer(answer);
    expect(first).toEqual({ text: '{"count":1}' });
    answer.count = 2;
    expect(serialiseAnswer(answer)).toEqual({ text: '{"count":2}' });
  });

  it('serialises what is not an object as JSON.stringify does', () => {
    expect(serialiseAnswer('text')).toEqual({ text: '"text"' });
    expect(serialiseAnswer(null)).toEqual({ text: 'null' });
    expect(serialiseAnswer(3)).toEqual({ text: '3' });
  });
});
