/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two short words. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The known word a typo most likely meant (at most two edits, or a prefix of it), if any: "did you mean". */
export function closest(word: string, known: readonly string[]): string | undefined {
  let best: { w: string; d: number } | undefined;
  for (const w of known) {
    const d = w.startsWith(word) && word.length >= 3 ? 1 : distance(word, w);
    if (d <= Math.min(2, Math.max(1, Math.floor(w.length / 3))) && (!best || d < best.d)) best = { w, d };
  }
  return best?.w;
}
