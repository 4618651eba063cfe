/**
 * Test helper: tokenizes text with the committed TextMate grammar through vscode-textmate and
 * vscode-oniguruma (the same engine VS Code uses), and renders tokens for snapshots.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as oniguruma from 'vscode-oniguruma';
import * as textmate from 'vscode-textmate';

const here = path.dirname(fileURLToPath(import.meta.url));
export const GRAMMAR_PATH = path.resolve(here, '../../grammars/lightsoplang.tmLanguage.json');
const require = createRequire(import.meta.url);

export interface Token {
  readonly text: string;
  /** Scopes without the root `source.lightsoplang`. */
  readonly scopes: readonly string[];
}

let grammarPromise: Promise<textmate.IGrammar> | null = null;

async function loadGrammar(): Promise<textmate.IGrammar> {
  const wasm = readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName: string) => {
      if (scopeName !== 'source.lightsoplang') return null;
      return textmate.parseRawGrammar(readFileSync(GRAMMAR_PATH, 'utf8'), GRAMMAR_PATH);
    },
  });
  const grammar = await registry.loadGrammar('source.lightsoplang');
  if (!grammar) throw new Error('grammar source.lightsoplang did not load');
  return grammar;
}

/** The grammar, loaded once per test file. */
export function getGrammar(): Promise<textmate.IGrammar> {
  grammarPromise ??= loadGrammar();
  return grammarPromise;
}

/** Tokenizes every line of `text` (split as VS Code does, at \n with an optional \r before it). */
export async function tokenize(text: string): Promise<Token[][]> {
  const grammar = await getGrammar();
  let state = textmate.INITIAL;
  const out: Token[][] = [];
  for (const line of text.split(/\r?\n/)) {
    const r = grammar.tokenizeLine(line, state, 0);
    if (r.stoppedEarly) throw new Error(`tokenization stopped early on ${JSON.stringify(line)}`);
    out.push(r.tokens.map((t) => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes.slice(1) })));
    state = r.ruleStack;
  }
  return out;
}

/** Shows invisible characters (controls, zero-width, BOM, no-break and line separators) as \\uXXXX. */
function visible(s: string): string {
  return s.replace(/[\u0000-\u001F\u007F\u00A0\u200B-\u200D\u2028\u2029\uFEFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}

/** Renders tokens one per line under each source line, for file snapshots. */
export function render(text: string, lines: Token[][]): string {
  const src = text.split(/\r?\n/);
  const out: string[] = [];
  lines.forEach((tokens, i) => {
    out.push(`> ${visible(src[i] ?? '')}`);
    for (const t of tokens) {
      if (t.text === '' && t.scopes.length === 0) continue;
      out.push(`  ${`|${visible(t.text)}|`.padEnd(24)} ${t.scopes.join(' ') || '-'}`);
    }
  });
  return out.join('\n') + '\n';
}

/** The scopes of the first token whose text is `text` on line `line` (0-based). */
export function scopesOf(lines: Token[][], line: number, text: string): readonly string[] {
  const t = lines[line]?.find((x) => x.text === text);
  if (!t) throw new Error(`no token ${JSON.stringify(text)} on line ${line}: ${JSON.stringify(lines[line]?.map((x) => x.text))}`);
  return t.scopes;
}
