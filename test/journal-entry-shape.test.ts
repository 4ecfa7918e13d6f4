import { describe, expect, expectTypeOf, it } from 'vitest';
import type { JournalEntry } from '../mock-server/journal/journal-entry.ts';
import { journalEntrySchema } from '../mock-server/routes/answer-schemas.ts';

/**
 * The journal entry has two declarations: the interface the gateway writes (`JournalEntry`) and the schema the
 * admin API's answers are described and checked with (`journalEntrySchema`, in the OpenAPI document). They
 * must name the same fields: a field added to one alone fails the type check here.
 */
type SchemaFields = keyof typeof journalEntrySchema.shape;

describe('the journal entry is one shape', () => {
  it('the interface and the schema name the same fields', () => {
    expectTypeOf<Exclude<keyof JournalEntry, SchemaFields>>().toEqualTypeOf<never>();
    expectTypeOf<Exclude<SchemaFields, keyof JournalEntry>>().toEqualTypeOf<never>();
    expect(Object.keys(journalEntrySchema.shape).length).toBeGreaterThan(10);
  });
});
