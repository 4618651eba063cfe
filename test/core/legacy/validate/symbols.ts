/**
 * The symbol table of a plan: which declaration owns each name (the first one wins) and every
 * `$` reference by name. Derived from the AST, never stored on it.
 */
import type { Declaration, Plan, ReferenceArgument } from '../../../../packages/core/src/ast';

export interface Symbols {
  /** Name to its first declaration, in source order. */
  readonly declarations: ReadonlyMap<string, Declaration>;
  /** Name to every reference token naming it, in source order (undeclared names included). */
  readonly references: ReadonlyMap<string, readonly ReferenceArgument[]>;
  /** Position of each first declaration in the order of `declarations` (0, 1, 2, ...). */
  readonly indexOf: ReadonlyMap<string, number>;
}

/**
 * Builds the symbol table. `references` is built on first use: linting does not need the tokens,
 * editors do.
 */
export function buildSymbols(plan: Plan, firsts?: { declarations: Map<string, Declaration>; indexOf: Map<string, number> }): Symbols {
  let declarations: Map<string, Declaration>;
  let indexOf: Map<string, number>;
  if (firsts) {
    // The parser already met every name once (it reports duplicates): reuse its tables.
    declarations = firsts.declarations;
    indexOf = firsts.indexOf;
  } else {
    declarations = new Map();
    indexOf = new Map();
    for (const d of plan.declarations) {
      if (d.name !== '' && !declarations.has(d.name)) {
        indexOf.set(d.name, declarations.size);
        declarations.set(d.name, d);
      }
    }
  }
  let references: Map<string, ReferenceArgument[]> | null = null;
  return {
    declarations,
    indexOf,
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
