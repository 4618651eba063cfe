// The built `lightsop` at 200,000 declarations: lint, run, fmt and graph finish with the right
// output instead of "Maximum call stack size exceeded" (issue 10, item 4).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, tempTree } from '../helpers/cli';
import { chainPlan, commentsPlan, cyclePlan, runBuilt, SIZE } from './plans';

const TIMEOUT = 120_000;

let dir = '';
beforeAll(() => {
  ensureBuilt();
  dir = tempTree({});
  writeFileSync(path.join(dir, 'chain.sop'), chainPlan());
  writeFileSync(path.join(dir, 'cycle.sop'), cyclePlan());
  writeFileSync(path.join(dir, 'comments.sop'), commentsPlan());
  writeFileSync(path.join(dir, 'indented.sop'), commentsPlan(SIZE, '   '));
});

interface JsonDiagnostic { code: string; severity: string; message: string; line: number; column: number }

describe('lint at 200k declarations', () => {
  it('reports the 200k-member cycle as one cycle diagnostic', async () => {
    const res = await runBuilt(['lint', '--format', 'json', 'cycle.sop'], { cwd: dir });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(1);
    const [report] = JSON.parse(res.stdout) as { file: string; diagnostics: JsonDiagnostic[] }[];
    const cycles = report!.diagnostics.filter((d) => d.code === 'cycle');
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toMatchObject({ severity: 'error', line: 1, column: 12 });
    expect(cycles[0]!.message).toMatch(/^Dependency cycle: v0 -> v1 -> .* -> \.\.\. -> v0 \(200000 declarations\)$/);
    const text = await runBuilt(['lint', 'cycle.sop'], { cwd: dir });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('cycle.sop:1:12: error: Dependency cycle: v0 -> v1');
    expect(text.stdout).toContain('1 file checked: 1 error');
  }, TIMEOUT);

  it('checks a 200k chain and 400k comment lines', async () => {
    const res = await runBuilt(['lint', '--format', 'json', 'chain.sop', 'comments.sop'], { cwd: dir });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const reports = JSON.parse(res.stdout) as { file: string; diagnostics: JsonDiagnostic[] }[];
    expect(reports.map((r) => [r.file, r.diagnostics.map((d) => `${d.line}:${d.code}`)])).toEqual([
      ['chain.sop', [`${SIZE}:unused-variable`]],
      ['comments.sop', [`${2 * SIZE + 2}:unused-variable`]],
    ]);
  }, TIMEOUT);
});

describe('run at 200k declarations', () => {
  it('prints every row and the summary in text mode', async () => {
    const res = await runBuilt(['run', 'chain.sop'], { cwd: dir });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(SIZE + 1);
    expect(lines.filter((l) => /^✓ @v\d+ +success +start$/.test(l))).toHaveLength(SIZE);
    expect(lines[SIZE]).toMatch(new RegExp(`^${SIZE} variables: ${SIZE} succeeded, 0 failed, 0 canceled, 0 not run \\(\\d+ ms\\)$`));
  }, TIMEOUT);

  it('prints every variable and command with --json', async () => {
    const res = await runBuilt(['run', '--json', 'chain.sop'], { cwd: dir });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { variables: Record<string, { status: string; value: string }>; failures: unknown[]; commands: string[] };
    const names = Object.keys(out.variables);
    expect(names).toHaveLength(SIZE);
    expect(names.every((n) => out.variables[n]!.status === 'success' && out.variables[n]!.value === 'start')).toBe(true);
    expect(out.failures).toEqual([]);
    expect(out.commands).toHaveLength(SIZE);
    expect(out.commands[SIZE - 1]).toBe('assign start');
  }, TIMEOUT);

  it('refuses the 200k-member cycle with its diagnostic and runs nothing', async () => {
    const res = await runBuilt(['run', '--json', 'cycle.sop'], { cwd: dir });
    expect(res.code).toBe(2);
    const out = JSON.parse(res.stdout) as { diagnostics: JsonDiagnostic[] };
    expect(out.diagnostics.map((d) => d.code)).toEqual(['cycle']);
  }, TIMEOUT);
});

describe('fmt at 200k comment lines', () => {
  it('formats, checks and prints 400k comment lines', async () => {
    const printed = await runBuilt(['fmt', 'indented.sop'], { cwd: dir });
    expect(printed.stderr).toBe('');
    expect(printed.code).toBe(0);
    expect(printed.stdout).toBe(commentsPlan());
    const dirty = await runBuilt(['fmt', '--check', 'indented.sop', 'comments.sop'], { cwd: dir });
    expect(dirty.code).toBe(1);
    expect(dirty.stdout).toBe('indented.sop: not formatted\n');
    const clean = await runBuilt(['fmt', '--check', 'comments.sop'], { cwd: dir });
    expect(clean.stderr).toBe('');
    expect(clean.code).toBe(0);
  }, TIMEOUT);
});

describe('graph at 200k declarations', () => {
  it('prints the 200k chain and the 200k-member cycle', async () => {
    const chain = await runBuilt(['graph', '--format', 'json', 'chain.sop'], { cwd: dir });
    expect(chain.stderr).toBe('');
    expect(chain.code).toBe(0);
    const g = JSON.parse(chain.stdout) as { nodes: { name: string }[]; edges: { from: string; to: string }[] };
    expect(g.nodes).toHaveLength(SIZE);
    expect(g.edges).toHaveLength(SIZE - 1);
    expect(g.edges[SIZE - 2]).toEqual({ from: `v${SIZE - 2}`, to: `v${SIZE - 1}` });

    const cycle = await runBuilt(['graph', 'cycle.sop'], { cwd: dir });
    expect(cycle.code).toBe(0);
    expect(cycle.stderr).toBe('cycle.sop:1:12: warning: the plan has errors (cycle); the graph shows what parsed\n');
    expect(cycle.stdout.match(/ -> /g)).toHaveLength(SIZE);
    expect(cycle.stdout).toContain(`"v0" -> "v${SIZE - 1}";`);
  }, TIMEOUT);
});
