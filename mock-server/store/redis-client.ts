/**
 * The part of a Redis client the shared state store uses, declared here rather than imported from ioredis:
 * Redis support is an optional part of the package, so its declarations (`dist/**\/*.d.ts`) name no type of
 * ioredis, and a new ioredis release cannot break the type check of a project that never asked for Redis.
 * ioredis itself is loaded only when a Redis store is asked for (`connectRedis`), and its client is checked
 * against this interface there, so a release that changed one of these calls fails this project's type
 * check, not a user's.
 */

/** A stream entry as XRANGE returns it: its id, then its fields and values in turn. */
export type StreamEntry = [id: string, fieldsAndValues: string[]];

/** MULTI ... EXEC: the commands queued, then run together. */
export interface RedisTransaction {
  hset(key: string, ...fieldsAndValues: string[]): RedisTransaction;
  pexpire(key: string, milliseconds: number): RedisTransaction;
  exec(): Promise<[error: Error | null, result: unknown][] | null>;
}

/** What the client's connection options may change on a duplicate (the subscriber's connection). */
export interface RedisDuplicateOptions {
  enableOfflineQueue?: boolean;
  enableAutoPipelining?: boolean;
  commandTimeout?: number;
}

export interface RedisClient {
  /** `ready` once connected and able to run commands. */
  readonly status: string;
  /** The commands sent and not answered yet. */
  readonly commandQueue: { readonly length: number };
  /** The socket, to hear any byte the store sends. */
  readonly stream: { on(event: 'data', listener: () => void): unknown };
  connect(): Promise<void>;
  disconnect(reconnect?: boolean): void;
  quit(): Promise<unknown>;
  duplicate(options?: RedisDuplicateOptions): RedisClient;
  on(event: 'connect' | 'ready' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  off(event: 'ready', listener: () => void): unknown;
  subscribe(channel: string): Promise<unknown>;
  /** A Lua script as a command of the client, called as `client[name](...keysThenArgs)`. */
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  eval(script: string, numberOfKeys: number, ...keysThenArgs: (string | number)[]): Promise<unknown>;
  get(key: string): Promise<string | null>;
  hgetall(key: string): Promise<Record<string, string>>;
  mget(...keys: string[]): Promise<(string | null)[]>;
  incr(key: string): Promise<number>;
  del(...keys: string[]): Promise<number>;
  zrem(key: string, ...members: (string | number)[]): Promise<number>;
  xlen(key: string): Promise<number>;
  xrange(key: string, start: string, end: string, count: 'COUNT', n: number): Promise<StreamEntry[]>;
  xrevrange(key: string, end: string, start: string, count: 'COUNT', n: number): Promise<StreamEntry[]>;
  multi(): RedisTransaction;
}
