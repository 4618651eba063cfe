/**
 * Where each declaration of an open plan is, parsed once per document version with core's
 * parser (no validation). Used to place inline results, CodeLens and "Run up to Here".
 */
import type * as vscode from 'vscode';
import { parsePlan, type Plan } from '@lightsop/core';

export interface DeclarationInfo {
  readonly name: string;
  readonly command: string | null;
  /** 1-based header line. */
  readonly line: number;
  /** 1-based last line of the block (continuation and here-doc included). */
  readonly endLine: number;
}

interface Entry {
  readonly version: number;
  readonly plan: Plan;
  readonly declarations: readonly DeclarationInfo[];
}

const cache = new Map<string, Entry>();

function entryFor(doc: vscode.TextDocument): Entry {
  const key = doc.uri.toString();
  const hit = cache.get(key);
  if (hit && hit.version === doc.version) return hit;
  const { plan } = parsePlan(doc.getText());
  const seen = new Set<string>();
  const declarations: DeclarationInfo[] = [];
  for (const d of plan.declarations) {
    // The first declaration of a name wins (4.3); later duplicates never run.
    if (d.name === '' || seen.has(d.name)) continue;
    seen.add(d.name);
    declarations.push({ name: d.name, command: d.command?.name ?? null, line: d.lineNumber, endLine: Math.max(d.lineNumber, d.range.endLine) });
  }
  const entry = { version: doc.version, plan, declarations };
  cache.set(key, entry);
  return entry;
}

export function declarationsOf(doc: vscode.TextDocument): readonly DeclarationInfo[] {
  return entryFor(doc).declarations;
}

export function isEnglishPlan(doc: vscode.TextDocument): boolean {
  return entryFor(doc).plan.english !== null;
}

/** The declaration whose block holds the 0-based `line`, or the nearest one above it. */
export function declarationAt(doc: vscode.TextDocument, line: number): DeclarationInfo | null {
  const line1 = line + 1;
  let best: DeclarationInfo | null = null;
  for (const d of declarationsOf(doc)) {
    if (d.line <= line1 && (!best || d.line > best.line)) best = d;
  }
  if (best) return best;
  // Above the first declaration (its attached comments): the first one.
  return declarationsOf(doc)[0] ?? null;
}

export function forgetDocument(uri: vscode.Uri): void {
  cache.delete(uri.toString());
}
