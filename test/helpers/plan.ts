/** Small helpers so tests read declarations and diagnostics without depending on AST details. */
import { analyzePlan, parsePlan, type AnalyzeOptions, type Declaration } from '@lightsop/core';

/** Arguments as strings: literal text, or `$name` for a reference. */
export function argTexts(d: Declaration): string[] {
  return d.arguments.map((a) => (a.kind === 'literal' ? a.value : `$${a.name}`));
}

/** Declarations of a source by name (first wins). */
export function decls(source: string): Map<string, Declaration> {
  const map = new Map<string, Declaration>();
  for (const d of parsePlan(source).plan.declarations) if (!map.has(d.name)) map.set(d.name, d);
  return map;
}

export function decl(source: string, name: string): Declaration {
  const d = decls(source).get(name);
  if (!d) throw new Error(`no declaration ${name} in ${JSON.stringify(source)}`);
  return d;
}

/** `code@line` pairs of every diagnostic, in check order. */
export function codes(source: string, options: AnalyzeOptions = {}): string[] {
  return analyzePlan(source, options).diagnostics.map((d) => `${d.code}@${d.range.line}`);
}

/** Error codes only. */
export function errors(source: string, options: AnalyzeOptions = {}): string[] {
  return analyzePlan(source, options).diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code}@${d.range.line}`);
}
