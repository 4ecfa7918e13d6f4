import type { Command } from 'commander';
import { intOption } from '../cli/cli-options.ts';

/** The load every saturating benchmark (bench, bench:proxy) applies: seconds, rounds, connections, warm-up. */
export interface LoadOptions {
  duration: number;
  rounds: number;
  connections: number;
  warmup: number;
}

/** Adds the load options to a benchmark's command; `rounds` is its default number of alternating rounds. */
export const withLoadOptions = (command: Command, rounds: number): Command =>
  command
    .option('-d, --duration <seconds>', 'measured seconds per server and round', intOption(1, 120), 5)
    .option('-r, --rounds <n>', 'alternating rounds (medians are reported)', intOption(1, 20), rounds)
    .option('-c, --connections <n>', 'concurrent connections', intOption(1, 1000), 50)
    .option('-w, --warmup <seconds>', 'warm-up seconds per server (not measured)', intOption(0, 60), 2);
