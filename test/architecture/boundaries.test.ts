// The dependency rules of ARCHITECTURE.md, checked on the sources themselves (ESLint's
// no-restricted-imports says the same while editing): core does no I/O and imports no editor API
// and no other package; the runtime imports only core among the packages and nothing of editors;
// in the language server only to-lsp.ts touches LSP positions.
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli';

/** Every .ts file under a folder of the repository, as [relative path, text]. */
function sources(dir: string): [string, string][] {
  const out: [string, string][] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) out.push([path.relative(repoRoot, p), readFileSync(p, 'utf8')]);
    }
  };
  walk(path.join(repoRoot, dir));
  return out;
}

/** The module specifiers a file imports or re-exports (static and literal dynamic imports; comments ignored). */
function importsOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** Where a relative import of `file` lands, relative to the repository. */
function landsIn(file: string, specifier: string): string {
  return path.relative(repoRoot, path.resolve(repoRoot, path.dirname(file), specifier));
}

const NODE_BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
const isEditorApi = (s: string) => s === 'vscode' || s.startsWith('vscode-');

/** Identifiers used as values (not property names or declarations) anywhere in a file. */
function globalsUsed(file: string, text: string, names: ReadonlySet<string>): string[] {
  const found: string[] = [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) && names.has(node.text)) {
      const parent = node.parent;
      const isPropertyName = (ts.isPropertyAccessExpression(parent) && parent.name === node)
        || ((ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) || ts.isMethodDeclaration(parent) || ts.isPropertySignature(parent)) && parent.name === node);
      const isDeclaration = (ts.isVariableDeclaration(parent) || ts.isParameter(parent) || ts.isFunctionDeclaration(parent)) && parent.name === node;
      if (!isPropertyName && !isDeclaration) found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const ARITHMETIC = new Set([ts.SyntaxKind.PlusToken, ts.SyntaxKind.MinusToken, ts.SyntaxKind.AsteriskToken, ts.SyntaxKind.SlashToken, ts.SyntaxKind.PlusEqualsToken, ts.SyntaxKind.MinusEqualsToken]);

/** True when the expression is an operand of + - * / (through parentheses and type assertions). */
function inArithmetic(node: ts.Node): boolean {
  let n: ts.Node = node;
  while (ts.isParenthesizedExpression(n.parent) || ts.isAsExpression(n.parent) || ts.isNonNullExpression(n.parent)) n = n.parent;
  return ts.isBinaryExpression(n.parent) && ARITHMETIC.has(n.parent.operatorToken.kind);
}

describe('package boundaries (ARCHITECTURE.md)', () => {
  it('core imports no I/O module, no editor API and no other package, and uses no I/O global', () => {
    const problems: string[] = [];
    const ioGlobals = new Set(['process', 'fetch', 'require', 'console', 'XMLHttpRequest', 'WebSocket', 'Deno', 'Bun']);
    for (const [file, text] of sources('packages/core/src')) {
      for (const s of importsOf(text)) {
        if (NODE_BUILTINS.has(s) || s.startsWith('node:')) problems.push(`${file} imports ${s} (core does no I/O)`);
        else if (isEditorApi(s)) problems.push(`${file} imports ${s} (core knows no editor)`);
        else if (s.startsWith('@lightsop/')) problems.push(`${file} imports ${s} (core depends on no other package)`);
        else if (s.startsWith('.') && !landsIn(file, s).startsWith(path.join('packages', 'core', 'src'))) problems.push(`${file} imports ${s}, outside core`);
      }
      for (const use of globalsUsed(file, text, ioGlobals)) problems.push(`${use} (core does no I/O)`);
    }
    expect(problems).toEqual([]);
  });

  it('the runtime imports only core among the packages, and nothing of editors', () => {
    const problems: string[] = [];
    for (const [file, text] of sources('packages/runtime/src')) {
      for (const s of importsOf(text)) {
        if (isEditorApi(s)) problems.push(`${file} imports ${s} (the runtime knows nothing of editors)`);
        else if (s.startsWith('@lightsop/') && s !== '@lightsop/core') problems.push(`${file} imports ${s} (the runtime imports only core)`);
        else if (s.startsWith('.') && !landsIn(file, s).startsWith(path.join('packages', 'runtime', 'src'))) problems.push(`${file} imports ${s}, outside the runtime`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('in the language server only to-lsp.ts touches LSP positions', () => {
    const problems: string[] = [];
    for (const [file, text] of sources('packages/language-server/src')) {
      if (path.basename(file) === 'to-lsp.ts') continue;
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node) => {
        const at = () => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
        // Arithmetic on `.character`, `{ character: ... }` built, or Position/Range.create. (Reading
        // it to check a request's params is not a conversion.)
        if (ts.isPropertyAccessExpression(node) && node.name.text === 'character' && inArithmetic(node)) problems.push(`${at()} computes with .character`);
        if ((ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node)) && node.name.getText(source) === 'character') problems.push(`${at()} builds a position`);
        if (ts.isPropertyAccessExpression(node) && node.name.text === 'create' && ['Position', 'Range'].includes(node.expression.getText(source))) problems.push(`${at()} calls ${node.getText(source)}`);
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(problems).toEqual([]);
  });
});
