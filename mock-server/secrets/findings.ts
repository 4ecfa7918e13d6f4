import type { SecretKind } from './patterns.ts';
import { originOf, type View } from './readings.ts';

/* What a scan found, in the text as sent, and the redaction that replaces it: `[REDACTED:<kind>]`. */

export interface ScanResult {
  redacted: string;
  kinds: SecretKind[];
  /** Kinds found only together with the agent's previous outgoing text: a secret split across two requests. */
  split?: SecretKind[];
}

export interface Finding {
  start: number;
  end: number;
  /** Absent when the finding only extends one found before (overlapping secrets are reported once). */
  kind?: SecretKind;
}

export function findAll(found: Finding[], view: View, form: string, kind: SecretKind) {
  for (let index = view.text.indexOf(form); index !== -1; index = view.text.indexOf(form, index + 1)) {
    add(found, view, index, form.length, kind);
  }
}

/** Records a finding in the text as sent, unless an earlier one covers it. */
export function add(found: Finding[], view: View, index: number, length: number, kind: SecretKind) {
  const start = originOf(view, index);
  const end = originOf(view, index + length);
  const overlapping = found.filter((f) => f.start < end && start < f.end);
  if (overlapping.some((f) => f.start <= start && end <= f.end)) return;
  found.push({ start, end, kind: overlapping.length > 0 ? undefined : kind });
}

/** Replaces each run of overlapping findings by one marker, named after its first reported finding. */
export function redact(text: string, found: readonly Finding[]): ScanResult {
  if (found.length === 0) return { redacted: text, kinds: [] };
  const kinds = [...new Set(found.flatMap((f) => (f.kind ? [f.kind] : [])))];
  const ordered = found.map((f, order) => ({ ...f, order })).sort((a, b) => a.start - b.start);
  let redacted = '';
  let copied = 0;
  for (let i = 0; i < ordered.length; ) {
    const first = ordered[i] as (typeof ordered)[number];
    let end = first.end;
    let named = first.kind ? first : undefined;
    for (i++; i < ordered.length && (ordered[i] as Finding).start < end; i++) {
      const next = ordered[i] as (typeof ordered)[number];
      end = Math.max(end, next.end);
      if (next.kind && (!named || next.order < named.order)) named = next;
    }
    redacted += `${text.slice(copied, first.start)}[REDACTED:${named?.kind ?? kinds[0]}]`;
    copied = end;
  }
  return { redacted: redacted + text.slice(copied), kinds };
}
