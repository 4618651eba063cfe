// `lightsop fmt` (print, --check, --write; atomic, keeps a BOM) and `lightsop graph`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, tempTree } from '../helpers/cli';

describe('lightsop fmt', () => {
  it('prints, checks and writes', async () => {
    const dir = tempTree({ 'a.sop': '\uFEFF@a   emit x\n@bb  emit $a   # c\n', 'ok.sop': '@a emit x\n' });
    const printed = await cli(['fmt', 'a.sop'], { cwd: dir });
    expect(printed.stdout).toBe('\uFEFF@a  emit x\n@bb emit $a # c\n');
    const check = await cli(['fmt', '--check', '.'], { cwd: dir });
    expect(check.code).toBe(1);
    expect(check.stdout).toBe('a.sop: not formatted\n');
    const write = await cli(['fmt', '--write', '.'], { cwd: dir });
    expect(write.code).toBe(0);
    expect(readFileSync(path.join(dir, 'a.sop'), 'utf8')).toBe('\uFEFF@a  emit x\n@bb emit $a # c\n');
    expect((await cli(['fmt', '--check', '.'], { cwd: dir })).code).toBe(0);
  });

  it('refuses ambiguous usage', async () => {
    const dir = tempTree({ 'a.sop': '@a emit x\n', 'b.sop': '@b emit x\n' });
    const res = await cli(['fmt', '.'], { cwd: dir });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('use --write');
  });
});

describe('lightsop graph', () => {
  const plan = '@page fetch x\n@summary summarize $page\n@words count $summary $page\n';
  it('dot, mermaid and json', async () => {
    const dir = tempTree({ 'p.sop': plan });
    const dot = await cli(['graph', 'p.sop'], { cwd: dir });
    expect(dot.stdout).toContain('"page" -> "summary";');
    expect(dot.stdout).toContain('"summary" -> "words";');
    const mermaid = await cli(['graph', 'p.sop', '--format', 'mermaid'], { cwd: dir });
    expect(mermaid.stdout).toContain('n0 --> n1');
    const json = JSON.parse((await cli(['graph', 'p.sop', '--format', 'json'], { cwd: dir })).stdout);
    expect(json.nodes.map((n: { name: string }) => n.name)).toEqual(['page', 'summary', 'words']);
    expect(json.edges).toEqual([{ from: 'page', to: 'summary' }, { from: 'summary', to: 'words' }, { from: 'page', to: 'words' }]);
  });
});
