/**
 * The symbol table of a plan: which declaration owns each name (the first one wins) and every
 * `$` reference by name. Derived from the AST, never stored on it.
 */
import type { Declaration, Plan, ReferenceArgument } from '../ast';

export interface Symbols {
  /** Name to its first declaration, in source order. */
  readonly declarations: ReadonlyMap<string, Declaration>;
  /** Name to every reference token naming it, in source order (undeclared names included). */
  readonly references: ReadonlyMap<string, readonly ReferenceArgument[]>;
  /** Position of each first declaration in the order of `declarations` (0, 1, 2, ...). */
  readonly indexOf: ReadonlyMap<string, number>;
}

/** Builds the symbol table. */
export function buildSymbols(plan: Plan): Symbols {
  const declarations = new Map<string, Declaration>();
  const indexOf = new Map<string, number>();
  const references = new Map<string, ReferenceArgument[]>();
  for (const d of plan.declarations) {
    if (d.name !== '' && !declarations.has(d.name)) {
      indexOf.set(d.name, declarations.size);
      declarations.set(d.name, d);
    }
    for (const a of d.arguments) {
      if (a.kind !== 'reference') continue;
      const list = references.get(a.name);
      if (list) list.push(a);
      else references.set(a.name, [a]);
    }
  }
  return { declarations, references, indexOf };
}

/** Names of the declarations that reference `name` (its dependents), in source order. */
export function dependentsOf(symbols: Symbols, name: string): string[] {
  const out: string[] = [];
  for (const [other, d] of symbols.declarations) {
    if (d.dependencies.includes(name)) out.push(other);
  }
  return out;
}
