/**
 * Topology checks (4.3): undefined references and dependency cycles. Cycle detection peels the
 * acyclic part of the graph with flat arrays (linear, no recursion), then hands what remains to
 * graphlib's Tarjan to find the strongly connected components; graphlib's recursion is only
 * trusted on small remainders, larger ones use the iterative fallback below.
 */
import { alg, Graph } from '@dagrejs/graphlib';
import type { Diagnostic } from '../diagnostics/diagnostic';
import { TokenKind, type SyntaxTree } from '../syntax/tree';
import { didYouMean, suggest } from './suggest';

/** Did-you-mean is computed for this many distinct misspelt names; the rest get none. */
const MAX_SUGGESTED_NAMES = 200;

/** `undefined-variable` on every reference to an undeclared name, in source order. */
export function checkUndefined(tree: SyntaxTree, inputDeclared: boolean): Diagnostic[] {
  const out: Diagnostic[] = [];
  const { argFrom, argKind, argTarget } = tree.a;
  // Usually every reference resolves: one flat pass says so.
  let unresolved = false;
  for (let g = 0; g < argKind.length && !unresolved; g++) if (argTarget[g] === -1 && argKind[g] === TokenKind.Reference) unresolved = true;
  if (!unresolved) return out;
  const suggestions = new Map<string, string[]>();
  for (let i = 0; i < tree.count; i++) {
    for (let g = argFrom[i]!; g < argFrom[i + 1]!; g++) {
      if (argKind[g] !== TokenKind.Reference || argTarget[g] !== -1) continue;
      const name = tree.referenceName(g);
      if (inputDeclared && name === 'input') continue;
      let hints = suggestions.get(name);
      if (!hints) {
        hints = suggestions.size < MAX_SUGGESTED_NAMES
          ? suggest(name, inputDeclared ? [...tree.symbolNames(), 'input'] : tree.symbolNames())
          : [];
        suggestions.set(name, hints);
      }
      const userName = tree.name(i);
      const user = userName === '' ? '' : ` (used by '${userName}')`;
      out.push({
        code: 'undefined-variable',
        severity: 'error',
        message: `Variable '${name}' is not declared${user}${hints.length ? '.' + didYouMean(hints) : ''}`,
        range: tree.argRange(i, g),
        data: { name, suggestions: hints },
      });
    }
  }
  return out;
}

/** Graphlib's recursive Tarjan overflows the stack somewhere above a few thousand nodes. */
const GRAPHLIB_TARJAN_LIMIT = 2000;
/** Messages name at most this many steps of a cycle; related locations stop at MAX_RELATED. */
const MAX_CYCLE_NAMES = 12;
const MAX_RELATED = 100;

/** `cycle`: one diagnostic per strongly connected component that contains a cycle. */
export function checkCycles(tree: SyntaxTree): Diagnostic[] {
  // Nodes are symbols (first declarations); each one's edges are its resolved references, each target once.
  const n = tree.symbolCount;
  const { symbolDecl, argFrom, argKind, argTarget } = tree.a;
  // The common case: every reference names an earlier symbol, so symbol order is a topological
  // order and there is no cycle; one pass over the references tells, without building the graph.
  if (referencesPointBack(n, symbolDecl, argFrom, argKind, argTarget)) return [];
  // Dependencies in compressed rows: deps of i are targets[offsets[i] .. offsets[i + 1]).
  const offsets = new Int32Array(n + 1);
  let resolved = new Int32Array(Math.max(16, n));
  const seenBy = new Int32Array(n);
  let edgeCount = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = edgeCount;
    const d = symbolDecl[i]!;
    for (let g = argFrom[d]!; g < argFrom[d + 1]!; g++) {
      const j = argTarget[g]!;
      if (j === -1 || argKind[g] !== TokenKind.Reference || seenBy[j] === i + 1) continue;
      seenBy[j] = i + 1;
      if (edgeCount === resolved.length) {
        const grown = new Int32Array(resolved.length * 2);
        grown.set(resolved);
        resolved = grown;
      }
      resolved[edgeCount++] = j;
    }
  }
  offsets[n] = edgeCount;
  const targets = resolved.subarray(0, edgeCount);
  const { components, deps: depLists } = cyclicComponents(n, offsets, targets);

  const out: { at: number; diagnostic: Diagnostic }[] = [];
  for (const members of components) {
    const set = new Set(members);
    const first = members[0]!;
    const decl = symbolDecl[first]!;
    const declName = tree.name(decl);
    let ref = -1;
    for (let g = argFrom[decl]!; g < argFrom[decl + 1]! && ref === -1; g++) {
      if (argKind[g] === TokenKind.Reference && argTarget[g] !== -1 && set.has(argTarget[g]!)) ref = g;
    }
    const refRange = tree.argRange(decl, ref);
    const path = cyclePath(first, argTarget[ref]!, depLists, set).map((i) => tree.name(symbolDecl[i]!));
    out.push({
      at: refRange.start,
      diagnostic: {
        code: 'cycle',
        severity: 'error',
        message: cycleMessage(path, declName),
        range: refRange,
        data: { name: declName, cycle: path },
        related: members.slice(1, MAX_RELATED + 1).map((i) => ({
          message: `'${tree.name(symbolDecl[i]!)}' is part of the dependency cycle through '${declName}'`,
          range: tree.nameRange(symbolDecl[i]!),
        })),
      },
    });
  }
  return out.sort((a, b) => a.at - b.at).map((o) => o.diagnostic);
}

/** True when each symbol's resolved references all name earlier symbols (then nothing is cyclic). */
function referencesPointBack(n: number, symbolDecl: Int32Array, argFrom: Int32Array, argKind: Uint8Array, argTarget: Int32Array): boolean {
  for (let i = 0; i < n; i++) {
    const d = symbolDecl[i]!;
    const to = argFrom[d + 1]!;
    for (let g = argFrom[d]!; g < to; g++) if (argTarget[g]! >= i && argKind[g] === TokenKind.Reference) return false;
  }
  return true;
}

/**
 * The strongly connected components that hold a cycle, in the graph on nodes 0 .. n-1 whose
 * edges leave node i for targets[offsets[i] .. offsets[i + 1]) (each target once, in reference
 * order), each with its members in ascending order. What cannot be on a cycle is peeled first,
 * in linear time: nodes whose dependencies all peel (Kahn), then nodes nothing left depends on;
 * the remainder goes to Tarjan. `deps` holds the dependency lists of the remaining nodes (for
 * `cyclePath`). Core's check and the language server's incremental one both call this.
 */
export function cyclicComponents(n: number, offsets: Int32Array, targets: Int32Array): { components: number[][]; deps: number[][] } {
  const edgeCount = offsets[n]!;
  // Edges that all point to lower nodes cannot close a cycle: nothing to peel.
  let backward = true;
  for (let i = 0; i < n && backward; i++) for (let e = offsets[i]!; e < offsets[i + 1]!; e++) if (targets[e]! >= i) backward = false;
  if (backward) return { components: [], deps: [] };
  const dependentCount = new Int32Array(n);
  for (let e = 0; e < edgeCount; e++) dependentCount[targets[e]!]!++;
  // Reverse rows: the dependents of each node.
  const revOffsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) revOffsets[i + 1] = revOffsets[i]! + dependentCount[i]!;
  const fill = revOffsets.slice(0, n);
  const sources = new Int32Array(edgeCount);
  for (let i = 0; i < n; i++) for (let e = offsets[i]!; e < offsets[i + 1]!; e++) sources[fill[targets[e]!]!++] = i;

  const remaining = new Int32Array(n);
  const alive = new Uint8Array(n).fill(1);
  const queue = new Int32Array(n);
  let head = 0;
  let tail = 0;
  for (let i = 0; i < n; i++) {
    remaining[i] = offsets[i + 1]! - offsets[i]!;
    if (remaining[i] === 0) queue[tail++] = i;
  }
  while (head < tail) {
    const i = queue[head++]!;
    alive[i] = 0;
    for (let e = revOffsets[i]!; e < revOffsets[i + 1]!; e++) if (--remaining[sources[e]!]! === 0) queue[tail++] = sources[e]!;
  }
  if (tail === n) return { components: [], deps: [] };
  const inDegree = new Int32Array(n);
  for (let i = 0; i < n; i++) if (alive[i]) for (let e = offsets[i]!; e < offsets[i + 1]!; e++) if (alive[targets[e]!]) inDegree[targets[e]!]!++;
  head = tail = 0;
  for (let i = 0; i < n; i++) if (alive[i] && inDegree[i] === 0) queue[tail++] = i;
  while (head < tail) {
    const i = queue[head++]!;
    alive[i] = 0;
    for (let e = offsets[i]!; e < offsets[i + 1]!; e++) if (alive[targets[e]!] && --inDegree[targets[e]!]! === 0) queue[tail++] = targets[e]!;
  }
  const rest: number[] = [];
  for (let i = 0; i < n; i++) if (alive[i]) rest.push(i);
  const deps: number[][] = [];
  if (rest.length === 0) return { components: [], deps };
  for (const i of rest) deps[i] = Array.from(targets.subarray(offsets[i]!, offsets[i + 1]!));
  const all = rest.length <= GRAPHLIB_TARJAN_LIMIT ? graphlibComponents(rest, deps, alive) : iterativeComponents(rest, deps, alive);
  // A single node is a cycle only when it depends on itself.
  const components = all.filter((members) => members.length > 1 || deps[members[0]!]!.includes(members[0]!));
  for (const members of components) members.sort((a, b) => a - b);
  return { components, deps };
}

/** The message of a `cycle` diagnostic for the path `name -> ... -> name`. */
export function cycleMessage(path: readonly string[], name: string): string {
  const shown = path.length <= MAX_CYCLE_NAMES ? path.join(' -> ')
    : `${path.slice(0, MAX_CYCLE_NAMES - 1).join(' -> ')} -> ... -> ${name} (${path.length - 1} declarations)`;
  return `Dependency cycle: ${shown}`;
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
export function cyclePath(start: number, next: number, deps: readonly (readonly number[])[], members: ReadonlySet<number>): number[] {
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
