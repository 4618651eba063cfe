/**
 * The ready queue of the dataflow scheduler (7.2): declarations start in ascending order of
 * level (longest dependency path), then name by UTF-16 code units. That order is computed once
 * per applied plan, as each entry's `rank` (`rankOrder`); the queue is then a bitset over ranks
 * with one summary bit per 32-bit word, so pushing and popping never compare names, never move
 * items and allocate nothing.
 */

export interface Ranked {
  readonly name: string;
  readonly level: number;
  /** Position in start order, 0 .. n-1, unique. */
  rank: number;
}

/** Sorts `items` into start order (level, then name by UTF-16 code units) and numbers their ranks. */
export function rankOrder<T extends Ranked>(items: readonly T[]): T[] {
  const sorted = items.slice();
  sorted.sort((a, b) => a.level - b.level || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (let i = 0; i < sorted.length; i++) sorted[i]!.rank = i;
  return sorted;
}

/** The lowest set bit of a non-zero 32-bit word. */
function lowestBit(word: number): number {
  return 31 - Math.clz32(word & -word);
}

export class RankQueue<T extends Ranked> {
  /** Bit r of word r >> 5: rank r is queued. */
  private readonly words: Uint32Array;
  /** Bit w of summary word w >> 5: word w is not zero. */
  private readonly summary: Uint32Array;
  /** No word below this index is non-zero. */
  private low: number;
  private count = 0;

  /** `byRank[r]` is the item of rank r. */
  constructor(private readonly byRank: readonly T[]) {
    const words = (byRank.length + 31) >>> 5;
    this.words = new Uint32Array(words);
    this.summary = new Uint32Array((words + 31) >>> 5);
    this.low = words;
  }

  get size(): number {
    return this.count;
  }

  has(item: T): boolean {
    const r = item.rank;
    return (this.words[r >>> 5]! & (1 << (r & 31))) !== 0;
  }

  /** Queues an item (once: queuing a queued item does nothing). */
  push(item: T): void {
    this.pushRank(item.rank);
  }

  /** Queues the item of rank r, 0 <= r < n (once: queuing a queued item does nothing). */
  pushRank(r: number): void {
    const w = r >>> 5;
    const bit = 1 << (r & 31);
    const word = this.words[w]!;
    if ((word & bit) !== 0) return;
    this.words[w] = word | bit;
    if (word === 0) this.summary[w >>> 5]! |= 1 << (w & 31);
    if (w < this.low) this.low = w;
    this.count++;
  }

  /** The queued item of the lowest rank, removed from the queue; undefined when empty. */
  pop(): T | undefined {
    if (this.count === 0) return undefined;
    const summary = this.summary;
    let s = this.low >>> 5;
    let mask = summary[s]! & (~0 << (this.low & 31));
    while (mask === 0) mask = summary[++s]!;
    const w = (s << 5) + lowestBit(mask);
    const word = this.words[w]!;
    const b = lowestBit(word);
    const rest = word & (word - 1);
    this.words[w] = rest;
    if (rest === 0) summary[s]! &= ~(1 << (w & 31));
    this.low = w;
    this.count--;
    return this.byRank[(w << 5) + b];
  }

  clear(): void {
    this.words.fill(0);
    this.summary.fill(0);
    this.low = this.words.length;
    this.count = 0;
  }
}
