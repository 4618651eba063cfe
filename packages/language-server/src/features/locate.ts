/**
 * Finding things in an analysed plan: the declaration block around an offset, the node under
 * the cursor, and every occurrence of a variable name. Shared by the navigation features so
 * that they agree on what "the symbol at the cursor" is. Offsets only; no LSP positions here.
 */
import type {
  Analysis, CommandNode, CommentNode, Declaration, HereDocBody, LiteralArgument, Plan, ReferenceArgument, SourceRange,
} from '@lightsop/core';

export type Target =
  | { readonly kind: 'declaration'; readonly decl: Declaration; readonly range: SourceRange }
  | { readonly kind: 'reference'; readonly decl: Declaration; readonly ref: ReferenceArgument; readonly range: SourceRange }
  | { readonly kind: 'command'; readonly decl: Declaration; readonly command: CommandNode; readonly range: SourceRange }
  | { readonly kind: 'literal'; readonly decl: Declaration; readonly arg: LiteralArgument; readonly range: SourceRange }
  | { readonly kind: 'heredoc-marker'; readonly decl: Declaration; readonly body: HereDocBody; readonly range: SourceRange }
  | { readonly kind: 'comment'; readonly decl: Declaration; readonly comment: CommentNode; readonly range: SourceRange };

/** Where a declaration's block starts: its first attached comment line, else its header. */
export function blockStart(decl: Declaration): number {
  for (const c of decl.comments) if (!c.inline) return Math.min(c.range.start, decl.headerRange.start);
  return decl.headerRange.start;
}

/** The declaration whose block (attached comments to the next block) contains `offset`. */
export function declarationAt(plan: Plan, offset: number): Declaration | null {
  const decls = plan.declarations;
  let lo = 0;
  let hi = decls.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (blockStart(decls[mid]!) <= offset) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found === -1 ? null : decls[found]!;
}

/** Every node of a declaration that the cursor can be on, in source order. */
function targetsOf(decl: Declaration): Target[] {
  const out: Target[] = [];
  for (const c of decl.comments) if (!c.inline) out.push({ kind: 'comment', decl, comment: c, range: c.range });
  out.push({ kind: 'declaration', decl, range: decl.nameRange });
  if (decl.command) out.push({ kind: 'command', decl, command: decl.command, range: decl.command.range });
  for (const a of decl.arguments) {
    if (a.kind === 'reference') out.push({ kind: 'reference', decl, ref: a, range: a.range });
    else if (a.origin !== 'heredoc') out.push({ kind: 'literal', decl, arg: a, range: a.range });
  }
  for (const c of decl.comments) if (c.inline) out.push({ kind: 'comment', decl, comment: c, range: c.range });
  if (decl.body?.kind === 'heredoc') {
    const body = decl.body;
    out.push({ kind: 'heredoc-marker', decl, body, range: body.beginRange });
    const arg = decl.arguments.find((a): a is LiteralArgument => a.kind === 'literal' && a.origin === 'heredoc');
    if (arg) out.push({ kind: 'literal', decl, arg, range: arg.range });
    if (body.endRange) out.push({ kind: 'heredoc-marker', decl, body, range: body.endRange });
  }
  return out;
}

/**
 * The node at `offset`. A cursor just after a token still counts as on it (editors place the
 * cursor there after typing a name), unless another token starts exactly at the cursor.
 */
export function targetAt(plan: Plan, offset: number): Target | null {
  const decl = declarationAt(plan, offset);
  if (!decl) return null;
  const targets = targetsOf(decl);
  let touching: Target | null = null;
  for (const t of targets) {
    if (t.range.start <= offset && offset < t.range.end) return t;
    if (t.range.end === offset && t.range.start < offset) touching = t;
  }
  return touching;
}

/** A variable name at the cursor, from a `@name` or a `$name` token. */
export interface SymbolAt {
  readonly name: string;
  /** The whole token (`@name` or `$name`). */
  readonly range: SourceRange;
  /** Offsets of the name without its `@` or `$`. */
  readonly nameStart: number;
  readonly nameEnd: number;
}

/** The variable at `offset`, or null when the cursor is not on a `@name` or `$name` token. */
export function symbolAt(plan: Plan, offset: number): SymbolAt | null {
  const t = targetAt(plan, offset);
  if (!t) return null;
  if (t.kind === 'declaration') {
    if (t.decl.name === '') return null;
    return { name: t.decl.name, range: t.range, nameStart: t.range.start + 1, nameEnd: t.range.end };
  }
  if (t.kind === 'reference') return { name: t.ref.name, range: t.range, nameStart: t.range.start + 1, nameEnd: t.range.end };
  return null;
}

/** Every declaration (first and duplicates) and every reference of a name, in source order. */
export function occurrences(analysis: Analysis, name: string): { declarations: Declaration[]; references: readonly ReferenceArgument[] } {
  const declarations = analysis.plan.declarations.filter((d) => d.name === name);
  return { declarations, references: analysis.symbols.references.get(name) ?? [] };
}

/** The source text of a range, shortened for display. */
export function excerpt(text: string, range: { start: number; end: number }, max = 160): string {
  const s = text.slice(range.start, range.end);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
