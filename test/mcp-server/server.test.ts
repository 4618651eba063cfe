/**
 * `lightsop mcp` (docs/mcp-server.md) driven by the MCP SDK's own Client, over stdio and over
 * Streamable HTTP: every tool, resource and prompt, and hostile inputs (huge text, invalid plans,
 * paths and links leading out of the workspace, bad arguments), each answered with a tool error
 * while the server keeps answering.
 */
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectHttp, connectStdio, exists, json, SECRET, text, useLightsopMcp, waitFor } from './fixture';

const MAX_PLAN_CHARS = 4 * 1024 * 1024;

describe.each([
  ['stdio', connectStdio],
  ['Streamable HTTP', connectHttp],
] as const)('lightsop mcp over %s', (_transport, connect) => {
  const mcp = useLightsopMcp(connect);
  const call = mcp.call;

  it('lists the five tools; only run_plan is annotated with side effects', async () => {
    const { tools } = await mcp.server.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['format_plan', 'lint_plan', 'list_commands', 'plan_graph', 'run_plan']);
    for (const tool of tools) {
      if (tool.name === 'run_plan') expect(tool.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      else expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      expect(tool.description!.length).toBeGreaterThan(20);
    }
    const lint = tools.find((t) => t.name === 'lint_plan')!;
    expect(Object.keys(lint.inputSchema.properties ?? {}).sort()).toEqual(['path', 'text']);
  });

  it('lint_plan: a valid plan, an unknown command with a suggestion, a broken file of the workspace', async () => {
    const ok = json(await call('lint_plan', { text: '@g greet world\n@lastAnswer assign $g\n' }));
    expect(ok).toMatchObject({ valid: true, errors: 0, diagnostics: [] });
    const unknown = json(await call('lint_plan', { text: '@g greett world\n@lastAnswer assign $g\n' }));
    expect(unknown.valid).toBe(false);
    expect(unknown.diagnostics).toEqual([expect.objectContaining({ code: 'unknown-command', line: 1, column: 4, severity: 'error' })]);
    expect(JSON.stringify(unknown.diagnostics)).toMatch(/greet/);
    const broken = json(await call('lint_plan', { path: 'plans/broken.sop' }));
    expect(broken.file).toBe('plans/broken.sop');
    expect((broken.diagnostics as { code: string }[]).map((d) => d.code)).toEqual(expect.arrayContaining(['unterminated-string']));
  });

  it('format_plan returns the canonical form and writes nothing', async () => {
    const result = await call('format_plan', { text: '@a    assign   x\n@bb assign $a\n' });
    const out = json(result);
    expect(out.changed).toBe(true);
    expect(text(result)).toBe('@a  assign x\n@bb assign $a\n');
    const file = json(await call('format_plan', { path: 'plans/hello.sop' }));
    expect(file.formatted).toContain('@g');
  });

  it('plan_graph: JSON nodes and edges, Mermaid, DOT; an invalid plan is a tool error', async () => {
    const graph = json(await call('plan_graph', { path: 'plans/hello.sop' }));
    expect(JSON.stringify(graph)).toMatch(/lastAnswer/);
    expect((graph.edges as unknown[]).length).toBe(1);
    expect(text(await call('plan_graph', { path: 'plans/hello.sop', format: 'mermaid' }))).toMatch(/^(graph|flowchart)/);
    expect(text(await call('plan_graph', { path: 'plans/hello.sop', format: 'dot' }))).toMatch(/digraph/);
    const invalid = await call('plan_graph', { path: 'plans/broken.sop' });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(/plans\/broken\.sop:1:\d+: .*\[unterminated-string\]/);
  });

  it('list_commands: the skills with descriptions and parameters, and the built-in assign', async () => {
    const out = json(await call('list_commands'));
    const commands = out.commands as { name: string; description: string; parameters?: unknown[]; sideEffects?: boolean; source: { kind: string } }[];
    const greet = commands.find((c) => c.name === 'greet')!;
    expect(greet).toMatchObject({ description: 'Greets someone by name', parameters: [{ name: 'name', description: 'who', required: true }] });
    expect(commands.find((c) => c.name === 'touch')).toMatchObject({ sideEffects: true });
    expect(commands.find((c) => c.name === 'assign')).toMatchObject({ source: { kind: 'builtin' } });
    expect(out.skills).toBe(path.join(mcp.ws.root, 'skills.mjs'));
  });

  it('run_plan runs a workspace plan with the configured skills, and a plan with an input', async () => {
    const out = json(await call('run_plan', { path: 'plans/hello.sop' }));
    expect(out.variables).toEqual({ g: { status: 'success', value: 'hello world' }, lastAnswer: { status: 'success', value: 'hello world' } });
    expect(out.commands).toEqual(['greet world', 'assign hello world']);
    const withInput = json(await call('run_plan', { text: '@g greet $input\n', input: 'Ada' }));
    expect(withInput.variables).toEqual({ g: { status: 'success', value: 'hello Ada' } });
  });

  it('run_plan reports progress while it runs', async () => {
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const pending = mcp.server.client.callTool({ name: 'run_plan', arguments: { text: '@g greet world\n@o gate $g\n' } }, undefined, { onprogress: (p) => void progress.push(p) });
    // The second command waits for the test: the first variable's progress arrives while the run is still going.
    await waitFor('the first progress notification', () => progress.some((p) => p.message === '@g success'));
    expect(progress[0]).toMatchObject({ progress: 1, total: 2, message: '@g success' });
    writeFileSync(path.join(mcp.ws.root, 'open.txt'), 'yes');
    expect(json(await pending).variables).toMatchObject({ o: { status: 'success', value: 'opened' } });
  });

  it('run_plan: a failing command is a result with failures; secrets are redacted; stdout noise does not break the protocol', async () => {
    const failed = await call('run_plan', { text: '@x fail\n@y assign $x\n' });
    expect(failed.isError ?? false).toBe(false);
    expect((failed.structuredContent as { failures: unknown[] }).failures).toEqual([{ variable: 'x', reason: 'it broke' }]);
    const leak = await call('run_plan', { text: '@k leak\n' });
    expect(JSON.stringify(leak)).not.toContain(SECRET);
    expect(text(leak)).toContain('the key is ***');
    const noisy = json(await call('run_plan', { text: '@n noisy\n' }));
    expect(noisy.variables).toEqual({ n: { status: 'success', value: 'quiet' } });
    expect(mcp.server.stderr()).not.toContain(SECRET);
  });

  it('run_plan: an invalid plan runs nothing (a tool error with file:line:column)', async () => {
    const marker = path.join(mcp.ws.root, 'marker.txt');
    rmSync(marker, { force: true });
    const result = await call('run_plan', { text: '@t touch\n@b assign $nowhere\n' });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/<text>:2:\d+: .*\[undefined-variable\]/);
    expect(exists(marker)).toBe(false);
    // The control: the same command in a valid plan does write it.
    json(await call('run_plan', { text: '@t touch\n' }));
    expect(exists(marker)).toBe(true);
  });

  it('run_plan stops at its timeout and gives up on a command that ignores the signal', async () => {
    const out = json(await call('run_plan', { text: '@h hang\n@a assign done\n', timeout: '300ms' }));
    expect(out.stopped).toBe('timeout');
    expect(out.variables).toMatchObject({ h: { status: 'canceled' }, a: { status: 'success' } });
    expect(out.leftRunning).toEqual(['h']);
  });

  it('a canceled request aborts the run: the command sees its signal', async () => {
    const controller = new AbortController();
    const pending = mcp.server.client.callTool({ name: 'run_plan', arguments: { text: '@w wait\n' } }, undefined, { signal: controller.signal });
    pending.catch(() => undefined);
    await waitFor('the command to start', () => exists(path.join(mcp.ws.root, 'waiting.txt')));
    controller.abort();
    await expect(pending).rejects.toThrow();
    await waitFor('the command to see the abort', () => exists(path.join(mcp.ws.root, 'aborted.txt')));
  });

  it('hostile inputs are tool errors, and the server keeps answering', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ text: 'x'.repeat(MAX_PLAN_CHARS + 1) }, /too big|<=|at most|4194304/i],
      [{ path: '../outside/secret.sop' }, /outside the workspace/],
      [{ path: path.join(mcp.ws.outside, 'secret.sop') }, /outside the workspace/],
      [{ path: '/etc/passwd' }, /outside the workspace/],
      [{ path: 'plans/escape.sop' }, /outside the workspace root \(through a symbolic link\)/],
      [{ path: 'plans/outdir/secret.sop' }, /outside the workspace root \(through a symbolic link\)/],
      [{ path: 'plans/nope.sop' }, /does not exist/],
      [{ path: 'plans' }, /is a directory/],
      [{ path: 'a\0b' }, /NUL/],
      [{ text: '@a assign x', path: 'plans/hello.sop' }, /either text or path/],
      [{}, /give the plan/],
      [{ text: 42 }, /expected string|Invalid/i],
    ];
    for (const tool of ['lint_plan', 'format_plan', 'plan_graph', 'run_plan']) {
      for (const [args, message] of cases) {
        const result = await call(tool, args);
        expect(result.isError, `${tool} ${JSON.stringify(args).slice(0, 80)}`).toBe(true);
        expect(text(result).slice(0, 2000), `${tool} ${JSON.stringify(args).slice(0, 80)}`).toMatch(message);
        expect(text(result)).not.toContain('outside-the-workspace');
      }
    }
    const badTimeout = await call('run_plan', { text: '@a assign x\n', timeout: 'soon' });
    expect(badTimeout.isError).toBe(true);
    expect(text(badTimeout)).toMatch(/timeout: expected a positive duration/);
    const unknownTool = await call('delete_everything', {});
    expect(unknownTool.isError).toBe(true);
    // Still serving.
    expect(json(await call('lint_plan', { text: '@a assign x\n@lastAnswer assign $a\n' })).valid).toBe(true);
  }, 120_000);

  it('resources: the language reference and the workspace plans, nothing outside it', async () => {
    const { resources } = await mcp.server.client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toContain('lightsop://docs/language');
    expect(uris).toEqual(expect.arrayContaining(['lightsop://plans/plans/hello.sop', 'lightsop://plans/plans/broken.sop', 'lightsop://plans/plans/sub/with%20space.sop']));
    expect(uris.some((u) => /escape|outdir|secret/.test(u))).toBe(false);
    const reference = await mcp.server.client.readResource({ uri: 'lightsop://docs/language' });
    expect((reference.contents[0] as { text: string }).text).toMatch(/^# LightSOPLang: language reference/);
    const plan = await mcp.server.client.readResource({ uri: 'lightsop://plans/plans/sub/with%20space.sop' });
    expect((plan.contents[0] as { text: string }).text).toBe('@a assign one\n@b assign $a two\n');
    for (const uri of ['lightsop://plans/plans/escape.sop', 'lightsop://plans/..%2Foutside%2Fsecret.sop', 'lightsop://plans/%2Fetc%2Fpasswd', 'lightsop://plans/plans/outdir/secret.sop']) {
      await expect(mcp.server.client.readResource({ uri }), uri).rejects.toThrow(/outside the workspace/);
    }
    const { resourceTemplates } = await mcp.server.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['lightsop://plans/{+path}']);
  });

  it('the prompt asks for a plan for a task, with the workspace commands', async () => {
    const { prompts } = await mcp.server.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['plan_for_task']);
    expect(prompts[0]!.arguments).toEqual([expect.objectContaining({ name: 'task', required: true })]);
    const prompt = await mcp.server.client.getPrompt({ name: 'plan_for_task', arguments: { task: 'greet the whole team' } });
    const body = (prompt.messages[0]!.content as { text: string }).text;
    expect(body).toContain('greet the whole team');
    expect(body).toMatch(/- greet name: Greets someone by name/);
    expect(body).toMatch(/lint_plan/);
  });
});
