/** "Did you mean …?": the known name closest to a mistyped one. */

/** Edit distance with adjacent transpositions (optimal string alignment): "prot" → "port" is 1. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known option closest to `input` (names without dashes), or undefined when none is close: within
 * a third of the input's length in edits (at least one edit), one that starts with an input of at
 * least three characters (`data` → `data-dir`), or its negation (`sequence` → `no-sequence`). Ties go
 * to the name sharing the longer start with the input (`sped` → `speed`, not `seed`), then to the
 * earlier name.
 */
export function closestOption(input: string, known: readonly string[]): string | undefined {
  const typed = input.toLowerCase();
  let best: { name: string; distance: number; prefix: number } | undefined;
  for (const name of known) {
    const related = (typed.length >= 3 && name.startsWith(typed)) || name === `no-${typed}` || typed === `no-${name}`;
    const distance = related ? 0.5 : editDistance(typed, name);
    if (distance > Math.max(1, Math.floor(typed.length / 3))) continue;
    const prefix = commonPrefix(typed, name);
    if (!best || distance < best.distance || (distance === best.distance && prefix > best.prefix)) best = { name, distance, prefix };
  }
  return best?.name;
}

const commonPrefix = (a: string, b: string) => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};
