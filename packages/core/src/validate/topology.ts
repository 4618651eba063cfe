/**
 * Topology checks (4.3): undefined references and dependency cycles. Cycle detection peels the
 * acyclic part of the graph with flat arrays (linear, no recursion), then hands what remains to
 * graphlib's Tarjan to find the strongly connected components; graphlib's recursion is only
 * trusted on small remainders, larger ones use the iterative fallback below.
 */
import { alg, Graph } from '@dagrejs/graphlib';
import type { Declaration, Plan, ReferenceArgument } from '../ast';
import type { Diagnostic } from '../diagnostics/diagnostic';
import { didYouMean, suggest } from './suggest';
import type { Symbols } from './symbols';

/** `undefined-variable` on every reference to an undeclared name, in source order. */
export function checkUndefined(plan: Plan, symbols: Symbols, inputDeclared: boolean): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const d of plan.declarations) {
    for (const a of d.arguments) {
      if (a.kind !== 'reference' || symbols.declarations.has(a.name)) continue;
      if (inputDeclared && a.name === 'input') continue;
      const candidates = inputDeclared ? [...symbols.declarations.keys(), 'input'] : symbols.declarations.keys();
      const suggestions = suggest(a.name, candidates);
      const user = d.name === '' ? '' : ` (used by '${d.name}')`;
      out.push({
        code: 'undefined-variable',
        severity: 'error',
        message: `Variable '${a.name}' is not declared${user}.${didYouMean(suggestions)}`.replace(/\.$/, ''),
        range: a.range,
        data: { name: a.name, suggestions },
      });
    }
  }
  return out;
}

/** Graphlib's recursive Tarjan overflows the stack somewhere above a few thousand nodes. */
const GRAPHLIB_TARJAN_LIMIT = 2000;

/** `cycle`: one diagnostic per strongly connected component that contains a cycle. */
export function checkCycles(symbols: Symbols): Diagnostic[] {
  const decls: Declaration[] = [];
  for (const d of symbols.declarations.values()) decls.push(d);
  const n = decls.length;
  const idx = new Map<string, number>();
  decls.forEach((d, i) => idx.set(d.name, i));
  // deps[i]: indices of the declared dependencies of declaration i.
  const deps: number[][] = decls.map((d) => {
    const list: number[] = [];
    for (const name of d.dependencies) {
      const j = idx.get(name);
      if (j !== undefined) list.push(j);
    }
    return list;
  });

  // Peel declarations whose dependencies are all resolved (Kahn), then those nothing left depends on.
  const remaining = new Int32Array(n);
  const dependents: number[][] = Array.from({ length: n }, () => []);
  for (let i = 0; i < n; i++) {
    remaining[i] = deps[i]!.length;
    for (const j of deps[i]!) dependents[j]!.push(i);
  }
  const alive = new Uint8Array(n).fill(1);
  let queue: number[] = [];
  for (let i = 0; i < n; i++) if (remaining[i] === 0) queue.push(i);
  while (queue.length > 0) {
    const next: number[] = [];
    for (const i of queue) {
      alive[i] = 0;
      for (const k of dependents[i]!) if (--remaining[k]! === 0) next.push(k);
    }
    queue = next;
  }
  const inDegree = new Int32Array(n);
  for (let i = 0; i < n; i++) if (alive[i]) for (const j of deps[i]!) if (alive[j]) inDegree[j]!++;
  queue = [];
  for (let i = 0; i < n; i++) if (alive[i] && inDegree[i] === 0) queue.push(i);
  while (queue.length > 0) {
    const i = queue.pop()!;
    alive[i] = 0;
    for (const j of deps[i]!) if (alive[j] && --inDegree[j]! === 0) queue.push(j);
  }
  const rest: number[] = [];
  for (let i = 0; i < n; i++) if (alive[i]) rest.push(i);
  if (rest.length === 0) return [];

  const components = rest.length <= GRAPHLIB_TARJAN_LIMIT
    ? graphlibComponents(rest, deps, alive)
    : iterativeComponents(rest, deps, alive);

  const out: { at: number; diagnostic: Diagnostic }[] = [];
  for (const members of components) {
    const set = new Set(members);
    if (members.length === 1 && !deps[members[0]!]!.includes(members[0]!)) continue;
    const first = Math.min(...members);
    const decl = decls[first]!;
    const ref = decl.arguments.find((a): a is ReferenceArgument => a.kind === 'reference' && set.has(idx.get(a.name) ?? -1))!;
    const path = cyclePath(first, idx.get(ref.name)!, deps, set).map((i) => decls[i]!.name);
    const sorted = [...members].sort((a, b) => a - b);
    out.push({
      at: ref.range.start,
      diagnostic: {
        code: 'cycle',
        severity: 'error',
        message: `Dependency cycle: ${path.join(' -> ')}`,
        range: ref.range,
        data: { name: decl.name, cycle: path },
        related: sorted.filter((i) => i !== first).map((i) => ({
          message: `'${decls[i]!.name}' is part of the cycle ${path.join(' -> ')}`,
          range: decls[i]!.nameRange,
        })),
      },
    });
  }
  return out.sort((a, b) => a.at - b.at).map((o) => o.diagnostic);
}

/** Strongly connected components of the remainder, by graphlib (node ids are indices). */
function graphlibComponents(rest: number[], deps: number[][], alive: Uint8Array): number[][] {
  const g = new Graph({ directed: true });
  for (const i of rest) g.setNode(String(i));
  for (const i of rest) for (const j of deps[i]!) if (alive[j]) g.setEdge(String(i), String(j));
  return alg.tarjan(g).map((c) => c.map(Number));
}

/** Iterative Tarjan for remainders too deep for graphlib's recursion. */
function iterativeComponents(rest: number[], deps: number[][], alive: Uint8Array): number[][] {
  const index = new Map<number, number>();
  const low = new Map<number, number>();
  const onStack = new Set<number>();
  const stack: number[] = [];
  const out: number[][] = [];
  let counter = 0;
  for (const root of rest) {
    if (index.has(root)) continue;
    const work: { v: number; k: number }[] = [{ v: root, k: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = deps[frame.v]!;
      if (frame.k < edges.length) {
        const w = edges[frame.k++]!;
        if (!alive[w]) continue;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, k: 0 });
        } else if (onStack.has(w)) low.set(frame.v, Math.min(low.get(frame.v)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.v;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.v)!));
      }
      if (low.get(frame.v) === index.get(frame.v)) {
        const component: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== frame.v);
        out.push(component);
      }
    }
  }
  return out;
}

/** A shortest path start -> next -> ... -> start inside one component (breadth-first). */
function cyclePath(start: number, next: number, deps: number[][], members: Set<number>): number[] {
  if (next === start) return [start, start];
  const parent = new Map<number, number>([[next, -1]]);
  let frontier = [next];
  while (frontier.length > 0 && !parent.has(start)) {
    const following: number[] = [];
    for (const v of frontier) {
      for (const w of deps[v]!) {
        if (!members.has(w) || parent.has(w)) continue;
        parent.set(w, v);
        following.push(w);
      }
    }
    frontier = following;
  }
  const back: number[] = [];
  for (let v = start; v !== -1; v = parent.get(v)!) back.push(v);
  return [start, ...back.reverse()];
}
