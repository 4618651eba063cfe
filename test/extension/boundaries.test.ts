// The extension asks, it does not re-derive (ARCHITECTURE.md): facts about an open plan come from
// the language server; only the modules listed here parse plan text themselves, each for text the
// server does not have; and no module but positions.ts turns core lines and columns into editor
// positions.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../../extension/src');

function sources(dir = root): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out.sort();
}

const rel = (p: string) => path.relative(root, p).split(path.sep).join('/');

describe('the extension asks the language server about open plans', () => {
  it('only modules about text the server does not have call core\'s parser', () => {
    const parsing = sources().filter((f) => /\b(parsePlan|analyzePlan)\b/.test(readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ''))).map(rel);
    expect(parsing).toEqual([
      // Plans a model generated in the chat: no document.
      'chat/controller.ts',
      // The debugger runs the text it was handed (an editor's, or a file no editor shows).
      'debug/adapter.ts',
      'debug/breakpoints.ts',
      // The plan a model wrote for an #!english script: no document.
      'graph/graph-data.ts',
      // Lint Workspace: plan files on disk, most in no editor.
      'lint-plans.ts',
    ]);
  });

  it('no module but positions.ts converts core lines and columns (the chat shows its own plans\' lines)', () => {
    const reading = /\.(lineNumber|endLine|endColumn)\b|\.range\.(line|column)\b|\bline\s*-\s*1\b/;
    // timeline-data.ts copies a run record's 1-based `lineNumber` into its bars as it is (the
    // panel places it with positions.ts), and run/traces.ts hands the runtime's line number to a
    // span as it is: neither makes an editor position.
    const exempt = new Set(['positions.ts', 'timeline/timeline-data.ts', 'run/traces.ts']);
    const offenders = sources().map(rel).filter((f) => !exempt.has(f) && !f.startsWith('chat/'))
      .filter((f) => reading.test(readFileSync(path.join(root, f), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')));
    expect(offenders).toEqual([]);
  });
});
