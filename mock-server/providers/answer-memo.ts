import { createBoundedMap } from '../bounded-map.ts';

/**
 * The answers a fixture provider gave, by the request as sent (at most `max`, the oldest forgotten first):
 * the same request gets the same frozen object again, which the run-tool stage serialises once
 * (`pipeline/run-tool.ts`), text and bytes. The fixture providers' answers are deterministic, so this changes
 * speed only, never an answer. An answer `keep` refuses (a large page) is given as made, unfrozen and not
 * remembered: the memo's memory stays bounded whatever is asked.
 */
export function createAnswerMemo<T extends object>(max: number, keep: (answer: T) => boolean = () => true) {
  const answers = createBoundedMap<string, T>(max);
  return (key: string, make: () => T): T => {
    const known = answers.get(key);
    if (known) return known;
    const made = make();
    if (!keep(made)) return made;
    answers.set(key, Object.freeze(made));
    return made;
  };
}
