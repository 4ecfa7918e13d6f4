import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CallContext } from '../http/context.ts';
import { createAgentRegistry } from '../identity/agent-registry.ts';
import { createLearnedKeys, readKeysFile } from './learned-keys.ts';

const dir = mkdtempSync(join(tmpdir(), 'learned-keys-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const ctxOf = (agent?: string) => ({ note: { agent } }) as unknown as CallContext;

describe('the agents’ own API keys the proxy knows', () => {
  it('reads a keys file as JSON or agent=key lines, and names the line of a mistake', () => {
    expect(readKeysFile(file('a.json', '{"svc-1": "key_0123456789"}'))).toEqual({
      'svc-1': 'key_0123456789',
    });
    expect(readKeysFile(file('a.txt', '# fleet\nsvc-1 = key_0123456789\n\nsvc-2=key_abcdefghij\n'))).toEqual({
      'svc-1': 'key_0123456789',
      'svc-2': 'key_abcdefghij',
    });
    expect(() => readKeysFile(file('b.txt', 'svc-1 key'))).toThrow(/b\.txt line 1: expected agent-id=key/);
    expect(() => readKeysFile(file('c.json', '{"svc-1": "short"}'))).toThrow(/8 characters or more/);
  });

  it('declared keys are known; an unknown agent’s requests are marked; a token exchange teaches its key', () => {
    const registry = createAgentRegistry([]);
    const keys = createLearnedKeys(registry, { apiKeys: { 'svc-1': 'key_0123456789' } });
    expect(registry.get('svc-1')?.apiKey).toBe('key_0123456789');
    const known = ctxOf('svc-1');
    keys.onRecord(known, 'tok-a', { operation: 'whoami', status: 200 });
    expect(known.note.own_key_unknown).toBeUndefined();
    const unknown = ctxOf('svc-2');
    keys.onRecord(unknown, 'tok-b', { operation: 'whoami', status: 200 });
    expect(unknown.note.own_key_unknown).toBe(true);
    // An answer without the agent: learned when the token is named (its first whoami).
    keys.onRecord(ctxOf(), undefined, {
      operation: 'idp.token',
      status: 200,
      request: '{"api_key":"key_svc2_secret"}',
      answer: '{"token":"tok-c"}',
    });
    const named = ctxOf('svc-2');
    keys.onRecord(named, 'tok-c', { operation: 'whoami', status: 200 });
    expect(named.note.own_key_unknown).toBeUndefined();
    expect(registry.get('svc-2')?.apiKey).toBe('key_svc2_secret');
    // A refused exchange teaches nothing.
    keys.onRecord(ctxOf(), undefined, {
      operation: 'idp.token',
      status: 401,
      request: '{"api_key":"key_wrong_guess"}',
      answer: '{"agent_id":"svc-3"}',
    });
    expect(registry.get('svc-3')).toBeUndefined();
  });
});
