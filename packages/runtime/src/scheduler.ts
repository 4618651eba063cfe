/**
 * The ready queue of the dataflow scheduler (7.2): declarations start in ascending order of
 * level (longest dependency path), then name by UTF-16 code units. A binary heap.
 */

export interface Schedulable {
  readonly name: string;
  level: number;
  queued: boolean;
}

function before(a: Schedulable, b: Schedulable): boolean {
  return a.level < b.level || (a.level === b.level && a.name < b.name);
}

export class ReadyQueue<T extends Schedulable> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    if (item.queued) return;
    item.queued = true;
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    if (items.length === 0) return undefined;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && before(items[l]!, items[m]!)) m = l;
        if (r < items.length && before(items[r]!, items[m]!)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    top.queued = false;
    return top;
  }

  clear(): void {
    for (const item of this.items) item.queued = false;
    this.items.length = 0;
  }
}
