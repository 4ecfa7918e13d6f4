/*
 * The facts the client report's rules read off a journal, by kind, under facts/: entry.ts (one entry: a
 * failure, when it was answered, its key, its description), causality.ts (connection and delivery facts:
 * what the client had in hand when it sent a request), reactions.ts (reaction or already on its way, and
 * batches), retries.ts (Retry-After, its scope, retry chains), search.ts (binary search and indexes over a
 * large journal), parallelism.ts (peaks of requests on the wire together), epochs.ts (the clock moved back:
 * rules judge each epoch apart).
 */
export * from './facts/causality.ts';
export * from './facts/entry.ts';
export * from './facts/epochs.ts';
export * from './facts/parallelism.ts';
export * from './facts/reactions.ts';
export * from './facts/retries.ts';
export * from './facts/search.ts';
