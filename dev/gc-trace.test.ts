import { describe, expect, it } from 'vitest';
import { allocatedBytes, allocationSince } from './gc-trace.ts';

// Two lines as `node --trace-gc-nvp` prints them (shortened), with output that is not a collection between.
const scavenge = (allocated: number) =>
  `[1:0x1:0]       34 ms: pause=0.6 mutator=29.2 gc=s reduce_memory=0 allocated=${allocated} promoted=1024 semi_space_copied=2048\n`;

describe('gc-trace', () => {
  it("sums the collections' allocated= and nothing else", () => {
    const output = `listening on http://127.0.0.1:1\n${scavenge(1000)}a log line allocated=99\n${scavenge(500)}`;
    expect(allocatedBytes(output)).toBe(1500);
    expect(allocatedBytes('listening on http://127.0.0.1:1\n')).toBe(0);
  });

  it('counts only what was printed since it started, per answered request', () => {
    let output = scavenge(4000);
    const perRequest = allocationSince(() => output);
    output += scavenge(3000) + scavenge(1000);
    expect(perRequest(2)).toBe(2000);
    expect(perRequest(0)).toBeNaN();
  });
});
