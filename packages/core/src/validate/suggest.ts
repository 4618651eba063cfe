/**
 * Did-you-mean suggestions: the candidates closest to a misspelt name by optimal string
 * alignment distance (Levenshtein with adjacent transpositions).
 */

/** Edit distance with adjacent transpositions; stops early above `max`. */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = [];
  let prev: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur: number[] = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      cur.push(d);
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length]!;
}

/** Up to `limit` candidates close to `name`, best first (case-insensitive matches first). */
export function suggest(name: string, candidates: Iterable<string>, limit = 3): string[] {
  // Short names only match by case; longer ones allow one edit per three characters.
  const max = name.length < 3 ? 0 : Math.max(1, Math.floor(name.length / 3));
  const lower = name.toLowerCase();
  const scored: { candidate: string; score: number }[] = [];
  for (const candidate of candidates) {
    if (candidate === name) continue;
    const score = candidate.toLowerCase() === lower ? 0 : editDistance(lower, candidate.toLowerCase(), max);
    if (score <= max) scored.push({ candidate, score });
  }
  scored.sort((x, y) => x.score - y.score || x.candidate.localeCompare(y.candidate));
  return scored.slice(0, limit).map((s) => s.candidate);
}

/** " Did you mean 'x'?" or the empty string. */
export function didYouMean(suggestions: readonly string[]): string {
  if (suggestions.length === 0) return '';
  return ` Did you mean ${suggestions.map((s) => `'${s}'`).join(' or ')}?`;
}
