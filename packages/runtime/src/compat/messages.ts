/**
 * The reference's error texts for invalid plans (spec 4.6), computed from our diagnostics. The
 * reference stops at its first error; our diagnostics come in check order (4.1), so the first
 * error diagnostic is the one it reports, with one exception: the reference raises
 * `undefined-variable` for the first declaration in *table* order, which the caller supplies.
 * Line numbers are the reference's, here-doc lines included (4.2, Q3).
 */
import type { Declaration, Diagnostic, HereDocBody } from '@lightsop/core';

export interface TableContext {
  /** Names of the interpreter's variable table, in table order, before the update. */
  readonly tableOrder: readonly string[];
  /** Whether an input is supplied, so that `$input` resolves to the implicit variable. */
  readonly inputSupplied: boolean;
}

/** The block a diagnostic lies in: the last declaration whose header is at or above its line. */
function blockAt(declarations: readonly Declaration[], line: number): Declaration | undefined {
  let found: Declaration | undefined;
  for (const d of declarations) {
    if (d.lineNumber > line) break;
    found = d;
  }
  return found;
}

function hereDoc(declaration: Declaration | undefined): HereDocBody | null {
  return declaration?.body?.kind === 'heredoc' ? declaration.body : null;
}

/**
 * `Variable X depends on undefined variable Y` for the first declaration in table order (the
 * table as the reference has it while applying: kept entries in their places, new ones appended
 * in source order) and its first missing dependency.
 */
function undefinedVariableText(diagnostic: Diagnostic, declarations: readonly Declaration[], table: TableContext): string {
  const byName = new Map<string, Declaration>();
  for (const d of declarations) if (d.name !== '' && !byName.has(d.name)) byName.set(d.name, d);
  const order: string[] = table.tableOrder.filter((name) => byName.has(name));
  const placed = new Set(order);
  for (const name of byName.keys()) if (!placed.has(name)) order.push(name);
  const known = (name: string) => byName.has(name) || (table.inputSupplied && name === 'input');
  for (const name of order) {
    for (const dep of byName.get(name)!.dependencies) {
      if (!known(dep)) return `Variable ${name} depends on undefined variable ${dep}`;
    }
  }
  const user = blockAt(declarations, diagnostic.range.line)?.name ?? '';
  return `Variable ${user} depends on undefined variable ${diagnostic.data?.name ?? ''}`;
}

/** The reference's message for the first error of a plan. */
export function referenceText(diagnostic: Diagnostic, declarations: readonly Declaration[], table: TableContext | null): string {
  const line = diagnostic.range.line;
  switch (diagnostic.code) {
    case 'expected-declaration':
      return `Line ${line}: declaration must start with @`;
    case 'missing-variable-name':
      return `Line ${line}: variable name missing`;
    case 'missing-command': {
      const name = diagnostic.data?.name ?? blockAt(declarations, line)?.name ?? '';
      return `Line ${line}: command name missing for @${name}`;
    }
    case 'unterminated-string':
      return `Unterminated string literal at line ${line}`;
    case 'invalid-escape':
      return `Invalid escape sequence at line ${line}`;
    case 'duplicate-declaration':
      return `Variable ${diagnostic.data?.name ?? blockAt(declarations, line)?.name ?? ''} declared multiple times`;
    case 'unterminated-heredoc': {
      // The reference always names the header line plus one.
      const block = blockAt(declarations, line);
      const body = hereDoc(block);
      return `Line ${(block?.lineNumber ?? line - 1) + 1}: missing --end-${body?.token ?? ''}-- for here-doc`;
    }
    case 'heredoc-trailing-content': {
      // Q3: the reference counts from the begin marker as if no blank line preceded it.
      const block = blockAt(declarations, line);
      const body = hereDoc(block);
      const refLine = block && body?.endRange ? body.endRange.line - body.beginRange.line + block.lineNumber + 2 : line;
      return `Line ${refLine}: unexpected content after --end-${body?.token ?? ''}--`;
    }
    case 'undefined-variable':
      return table ? undefinedVariableText(diagnostic, declarations, table) : diagnostic.message;
    case 'cycle':
      return 'Cycle detected in LightSOPLang declarations';
    default:
      return diagnostic.message;
  }
}

/** The first error of a list of diagnostics in check order. */
export function firstError(diagnostics: readonly Diagnostic[]): Diagnostic | undefined {
  return diagnostics.find((d) => d.severity === 'error');
}
