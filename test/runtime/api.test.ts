// The public API of @lightsop/runtime (issue 12 item 3): each entry exports exactly the names its
// README lists, in the TypeScript sources (types included) and in the built bundles (values).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, repoRoot } from '../helpers/cli';

const ENTRIES = [
  { name: '@lightsop/runtime', source: 'packages/runtime/src/index.ts', built: 'packages/runtime/dist/index.js' },
  { name: '@lightsop/runtime/skills', source: 'packages/runtime/src/skills/index.ts', built: 'packages/runtime/dist/skills.js' },
  { name: '@lightsop/runtime/mcp', source: 'packages/runtime/src/mcp/index.ts', built: 'packages/runtime/dist/mcp.js' },
  { name: '@lightsop/runtime/otel', source: 'packages/runtime/src/otel/index.ts', built: 'packages/runtime/dist/otel.js' },
  { name: '@lightsop/runtime/compat', source: 'packages/runtime/src/compat/index.ts', built: 'packages/runtime/dist/compat.js' },
] as const;

/**
 * The names the README lists for each entry: under `## Public API`, each `### \`ENTRY\`` section's
 * list items start with the backticked names they document, before the dash.
 */
function documentedApi(readme: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const api = readme.split(/^## Public API$/m)[1]?.split(/^## /m)[0] ?? '';
  for (const section of api.split(/^### /m).slice(1)) {
    const entry = /^`([^`]+)`/.exec(section)?.[1];
    if (!entry) continue;
    const names: string[] = [];
    for (const line of section.split('\n')) {
      if (!line.startsWith('- ')) continue;
      const head = line.slice(2).split(' — ')[0]!;
      for (const m of head.matchAll(/`([^`]+)`/g)) names.push(m[1]!);
    }
    out.set(entry, names);
  }
  return out;
}

/** Every name each source entry exports, and which of them are values (exist at run time). */
function exportedApi(): Map<string, { all: string[]; values: string[] }> {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(repoRoot, 'tsconfig.json'), {}, {
    ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); },
  })!;
  const files = ENTRIES.map((e) => path.join(repoRoot, e.source));
  const program = ts.createProgram(files, { ...parsed.options, noEmit: true });
  const checker = program.getTypeChecker();
  const out = new Map<string, { all: string[]; values: string[] }>();
  for (const entry of ENTRIES) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(path.join(repoRoot, entry.source))!)!;
    const symbols = checker.getExportsOfModule(module);
    const isValue = (s: ts.Symbol) => ((s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s).flags & ts.SymbolFlags.Value) !== 0;
    out.set(entry.name, { all: symbols.map((s) => s.name).sort(), values: symbols.filter(isValue).map((s) => s.name).sort() });
  }
  return out;
}

describe('the public API of @lightsop/runtime', () => {
  let documented: Map<string, string[]>;
  let exported: Map<string, { all: string[]; values: string[] }>;
  beforeAll(() => {
    ensureBuilt();
    documented = documentedApi(readFileSync(path.join(repoRoot, 'packages/runtime/README.md'), 'utf8'));
    exported = exportedApi();
  }, 120000);

  it('the README lists every entry once, without repeating a name', () => {
    expect([...documented.keys()]).toEqual(ENTRIES.map((e) => e.name));
    for (const [entry, names] of documented) expect(names, entry).toEqual([...new Set(names)]);
  });

  for (const entry of ENTRIES) {
    it(`${entry.name}: the sources export exactly the names the README lists`, () => {
      const listed = [...documented.get(entry.name)!].sort();
      const { all } = exported.get(entry.name)!;
      expect({ unlisted: all.filter((n) => !listed.includes(n)), notExported: listed.filter((n) => !all.includes(n)) }).toEqual({ unlisted: [], notExported: [] });
    });

    it(`${entry.name}: the built bundle exports exactly the listed values`, async () => {
      const bundle = (await import(pathToFileURL(path.join(repoRoot, entry.built)).href)) as Record<string, unknown>;
      expect(Object.keys(bundle).sort()).toEqual(exported.get(entry.name)!.values);
    });
  }

  it('the internals the sessions use stay internal', () => {
    const all = exported.get('@lightsop/runtime')!.all;
    for (const internal of ['parseCompression', 'coerceResult', 'feedbackBlock', 'SopSession', 'createStandardSkills', 'buildGenerationPrompt', 'createValue']) {
      expect(all).not.toContain(internal);
    }
  });

  it('the README parser finds a name added to the exports but not to the list', () => {
    const readme = '## Public API\n\n### `x`\n\n- `a`, `b` — things, `not` this.\n- `c` — more.\n\n## Other\n- `d` — no.\n';
    expect(documentedApi(readme)).toEqual(new Map([['x', ['a', 'b', 'c']]]));
  });
});
