/**
 * The spec's sections (agent-tool-gateway.md, as docs/contract.md names them) and references to them as
 * data: a check or a client rule names the sections and numbered rules it enforces with a `SpecRef`, and
 * prose (`§5 rule 3, §7`) is only ever formatted from it, never parsed.
 */

/** The spec's sections by number, with their titles. */
export const SPEC_SECTIONS = {
  1: 'What the service does',
  2: 'Resources and their fields',
  3: 'States and transitions',
  4: 'Endpoints',
  5: 'Authentication',
  6: 'Events',
  7: 'Errors',
  8: 'Limits',
  9: 'Versioning',
} as const;

/** A section number of the spec, 1 to 9. */
export type SpecSection = keyof typeof SPEC_SECTIONS;

/**
 * One cited section: its number, the numbered rules of it that apply (none: the section as a whole), and a
 * note in words for what a section says outside its numbered rules (`429: honor Retry-After`) or the
 * outside standard it leans on (`RFC 9110 §5.1`). A note cites no further section of the spec.
 *
 * @example
 * { section: 5, rules: [3] } // §5 rule 3
 * { section: 7, note: '429 remedy' } // §7 (429 remedy)
 */
export interface SpecCitation {
  readonly section: SpecSection;
  readonly rules?: readonly number[];
  readonly note?: string;
}

/** What a check or a client rule enforces: one or more citations, the first the one it is filed under. */
export type SpecRef = readonly [SpecCitation, ...SpecCitation[]];

/** `1, 3 and 5`, with runs of consecutive numbers as ranges (`3-4`). */
function ruleList(rules: readonly number[]): string {
  const sorted = [...new Set(rules)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] as number) === (sorted[j] as number) + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : String(sorted[i]));
    i = j + 1;
  }
  return parts.length === 1 ? (parts[0] as string) : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

/** One citation as prose: `§5 rules 3-4`, `§7 (429 remedy)`. */
function formatCitation({ section, rules, note }: SpecCitation): string {
  const numbered = rules?.length ? ` ${rules.length > 1 ? 'rules' : 'rule'} ${ruleList(rules)}` : '';
  return `§${section}${numbered}${note ? ` (${note})` : ''}`;
}

/**
 * A reference as prose, as reports print it.
 *
 * @example
 * formatSpecRef([{ section: 5, rules: [3] }, { section: 7 }]); // '§5 rule 3, §7'
 * formatSpecRef([{ section: 4, rules: [2] }, { section: 5, rules: [2, 4] }]); // '§4 rule 2, §5 rules 2 and 4'
 */
export function formatSpecRef(ref: SpecRef): string {
  return ref.map(formatCitation).join(', ');
}

/** The section a reference is filed under (reports group by it): its first citation's. */
export function primarySection(ref: SpecRef): SpecSection {
  return ref[0].section;
}

/**
 * Every place a reference cites, one per numbered rule, or the section alone when it names none.
 *
 * @example
 * citedPlaces([{ section: 5, rules: [3, 4] }, { section: 7, note: '429 remedy' }]); // ['§5 rule 3', '§5 rule 4', '§7']
 */
export function citedPlaces(ref: SpecRef): string[] {
  return ref.flatMap(({ section, rules }) =>
    rules?.length ? rules.map((rule) => `§${section} rule ${rule}`) : [`§${section}`],
  );
}
