/**
 * The symbol table of a plan: which declaration owns each name (the first one wins) and every
 * `$` reference by name. Derived from the AST, never stored on it.
 */
import type { Declaration, Plan, ReferenceArgument } from '../ast';
import type { SyntaxTree } from '../syntax/tree';

export interface Symbols {
  /** Name to its first declaration, in source order. */
  readonly declarations: ReadonlyMap<string, Declaration>;
  /** Name to every reference token naming it, in source order (undeclared names included). */
  readonly references: ReadonlyMap<string, readonly ReferenceArgument[]>;
  /** Position of each first declaration in the order of `declarations` (0, 1, 2, ...). */
  readonly indexOf: ReadonlyMap<string, number>;
}

/**
 * Builds the symbol table. Every map is built on first use: linting reads the compact tree and
 * never needs them, editors do. With the plan's tree, names are looked up there.
 */
export function buildSymbols(plan: Plan, tree?: SyntaxTree): Symbols {
  let declarations: Map<string, Declaration> | null = null;
  let indexOf: Map<string, number> | null = null;
  let references: Map<string, ReferenceArgument[]> | null = null;
  const build = () => {
    declarations = new Map();
    indexOf = new Map();
    if (tree) {
      for (let s = 0; s < tree.symbolCount; s++) {
        const i = tree.a.symbolDecl[s]!;
        const name = tree.name(i);
        indexOf.set(name, s);
        declarations.set(name, tree.declaration(i));
      }
      return;
    }
    for (const d of plan.declarations) {
      if (d.name !== '' && !declarations.has(d.name)) {
        indexOf.set(d.name, declarations.size);
        declarations.set(d.name, d);
      }
    }
  };
  return {
    get declarations() {
      if (!declarations) build();
      return declarations!;
    },
    get indexOf() {
      if (!indexOf) build();
      return indexOf!;
    },
    get references() {
      if (!references) {
        references = new Map();
        for (const d of plan.declarations) {
          for (const a of d.arguments) {
            if (a.kind !== 'reference') continue;
            const list = references.get(a.name);
            if (list) list.push(a);
            else references.set(a.name, [a]);
          }
        }
      }
      return references;
    },
  };
}

const dependentsCache = new WeakMap<Symbols, Map<string, string[]>>();

/** Names of the declarations that reference `name` (its dependents), in source order. */
export function dependentsOf(symbols: Symbols, name: string): string[] {
  let map = dependentsCache.get(symbols);
  if (!map) {
    // Built once per analysis, on first use: linting never needs it, editors ask often.
    map = new Map();
    for (const [other, d] of symbols.declarations) {
      for (const dep of d.dependencies) {
        const list = map.get(dep);
        if (list) list.push(other);
        else map.set(dep, [other]);
      }
    }
    dependentsCache.set(symbols, map);
  }
  return map.get(name)?.slice() ?? [];
}
