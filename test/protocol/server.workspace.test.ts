// The workspace model over JSON-RPC, on real temporary folders: lightsop.config.json and the
// skills file it names, watched-file changes, a bad config reported on the config file, and
// the trust rule for skills modules (refused and reported until the client trusts the workspace).
import { describe, expect, it } from 'vitest';
import type { PublishDiagnosticsParams } from 'vscode-languageserver';
import { RICH_CAPABILITIES, textOf, useTestWorkspace } from './helpers';

const ws = useTestWorkspace('lightsop-ws-');
const { uriOf, write, start } = ws;
const unknownCommands = (p: PublishDiagnosticsParams) => p.diagnostics.filter((d) => d.code === 'unknown-command').map((d) => d.message);

const PLAN = '@page fetch "https://example.org"\n@short summarize $page\n@lastAnswer final_answer $short\n';

describe('workspace', () => {
  it('makes unknown-command appear and disappear when the skills file changes', async () => {
    write('lightsop.config.json', { skills: './skills.json' });
    write('skills.json', { fetch: 'Downloads a URL', summarize: 'Summarizes text' });
    const c = await start();
    const plan = uriOf('plan.sop');
    await c.open(plan, PLAN);
    expect(unknownCommands(await c.diagnosticsFor(plan, 1))).toEqual([]);

    // The server registered watchers for the config and the skills file.
    const watchers = (c.registrations.find((r) => r.method === 'workspace/didChangeWatchedFiles')!.registerOptions as { watchers: { globPattern: { pattern: string } }[] }).watchers;
    expect(watchers.map((w) => w.globPattern.pattern)).toEqual(['lightsop.config.json', 'skills.json']);

    write('skills.json', { fetch: 'Downloads a URL' });
    let mark = c.diagnosticsLog.length;
    await c.connection.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: uriOf('skills.json'), type: 2 }] });
    const appeared = await c.diagnostics(plan, (p) => unknownCommands(p).length > 0, mark);
    expect(unknownCommands(appeared)).toEqual(["Unknown command 'summarize': it is not in the skills description"]);
    expect(appeared.version).toBe(1);

    write('skills.json', { fetch: 'Downloads a URL', summarize: 'Summarizes text' });
    mark = c.diagnosticsLog.length;
    await c.connection.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: uriOf('skills.json'), type: 2 }] });
    const gone = await c.diagnostics(plan, () => true, mark);
    expect(unknownCommands(gone)).toEqual([]);
  });

  it('re-reads the config when it changes to name another skills file', async () => {
    write('lightsop.config.json', {});
    write('other.json', { fetch: 'x' });
    const c = await start();
    const plan = uriOf('plan.sop');
    await c.open(plan, PLAN);
    expect(unknownCommands(await c.diagnosticsFor(plan, 1))).toEqual([]);
    write('lightsop.config.json', { skills: 'other.json' });
    const mark = c.diagnosticsLog.length;
    await c.connection.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: uriOf('lightsop.config.json'), type: 2 }] });
    const after = await c.diagnostics(plan, () => true, mark);
    expect(unknownCommands(after)).toHaveLength(1);
  });

  it('reports a bad config as diagnostics on the config file, at the fields, and clears them when fixed', async () => {
    const config = '{\n  "skills": "./missing.json",\n  "plan": ["*.sop"],\n  "llm": { "apiKey": "x" }\n}\n';
    write('lightsop.config.json', config);
    const c = await start();
    const published = await c.diagnostics(uriOf('lightsop.config.json'));
    const found = published.diagnostics.map((d) => [d.code, d.severity, textOf(config, d.range), d.message]);
    expect(found).toEqual([
      ['invalid-config', 1, '"plan"', expect.stringContaining('unknown field "plan" (did you mean "plans"?)')],
      ['invalid-config', 1, '"apiKey"', expect.stringContaining('LIGHTSOP_LLM_API_KEY')],
      ['skills-not-loaded', 1, '"./missing.json"', "Skills file './missing.json': no such file"],
    ]);
    write('lightsop.config.json', '{ "skills": ');
    let mark = c.diagnosticsLog.length;
    await c.connection.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: uriOf('lightsop.config.json'), type: 2 }] });
    const broken = await c.diagnostics(uriOf('lightsop.config.json'), () => true, mark);
    expect(broken.diagnostics[0]!.message).toContain('invalid JSON');
    write('lightsop.config.json', {});
    mark = c.diagnosticsLog.length;
    await c.connection.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: uriOf('lightsop.config.json'), type: 2 }] });
    expect((await c.diagnostics(uriOf('lightsop.config.json'), () => true, mark)).diagnostics).toEqual([]);
  });

  it('refuses a skills module in an untrusted workspace, says so, and loads it once trusted', async () => {
    write('lightsop.config.json', { skills: './skills.mjs' });
    write('skills.mjs', 'export default { fetch: { description: "Downloads", run: () => "page" } };\n');
    const c = await start();
    const config = await c.diagnostics(uriOf('lightsop.config.json'));
    expect(config.diagnostics).toHaveLength(1);
    expect(config.diagnostics[0]).toMatchObject({ code: 'skills-not-loaded', severity: 2 });
    expect(config.diagnostics[0]!.message).toContain('not trusted');
    const message = await c.waitUntil(() => c.messages.find((m) => m.message.includes('skills.mjs')), 'a message about the refused module');
    expect(message.type).toBe(2);
    const plan = uriOf('plan.sop');
    await c.open(plan, PLAN);
    expect(unknownCommands(await c.diagnosticsFor(plan, 1))).toEqual([]);

    const mark = c.diagnosticsLog.length;
    await c.connection.sendNotification('lightsop/setTrusted', { trusted: true });
    const checked = await c.diagnostics(plan, (p) => unknownCommands(p).length > 0, mark);
    expect(unknownCommands(checked)).toEqual(["Unknown command 'summarize': it is not in the skills description"]);
    expect((await c.diagnostics(uriOf('lightsop.config.json'), () => true, mark)).diagnostics).toEqual([]);
  });

  it('takes trust from initializationOptions; workspace/didChangeConfiguration revokes it but never grants it', async () => {
    write('lightsop.config.json', { skills: './skills.mjs' });
    write('skills.mjs', 'export default { listCommands: () => [{ name: "fetch", description: "d" }], executeCommand: () => undefined };\n');
    const c = await start({ initializationOptions: { trusted: true } });
    const plan = uriOf('plan.sop');
    await c.open(plan, PLAN);
    expect(unknownCommands(await c.diagnosticsFor(plan, 1))).toHaveLength(1);
    const mark = c.diagnosticsLog.length;
    await c.connection.sendNotification('workspace/didChangeConfiguration', { settings: { lightsop: { trusted: false } } });
    const refused = await c.diagnostics(plan, () => true, mark);
    expect(unknownCommands(refused)).toEqual([]);
    const config = await c.diagnostics(uriOf('lightsop.config.json'), () => true, mark);
    expect(config.diagnostics[0]!.code).toBe('skills-not-loaded');
    // A settings change claiming trust changes nothing; only lightsop/setTrusted grants it.
    await c.connection.sendNotification('workspace/didChangeConfiguration', { settings: { lightsop: { trusted: true } } });
    const edited = await c.change(plan, `${PLAN}\n`);
    expect(unknownCommands(await c.diagnosticsFor(plan, edited))).toEqual([]);
    const mark2 = c.diagnosticsLog.length;
    await c.connection.sendNotification('lightsop/setTrusted', { trusted: true });
    const granted = await c.diagnostics(plan, (p) => unknownCommands(p).length > 0, mark2);
    expect(unknownCommands(granted)).toHaveLength(1);
  });

  it("uses the client's skills override (VS Code's lightsop.skills) instead of the config's, and follows lightsop/setSkills", async () => {
    write('lightsop.config.json', { skills: './skills.json' });
    write('skills.json', { fetch: 'Downloads a URL', summarize: 'Summarizes text' });
    write('other.json', { fetch: 'Downloads a URL' });
    const c = await start({ initializationOptions: { skills: 'other.json' } });
    const plan = uriOf('plan.sop');
    await c.open(plan, PLAN);
    expect(unknownCommands(await c.diagnostics(plan, (p) => unknownCommands(p).length > 0))).toEqual(["Unknown command 'summarize': it is not in the skills description"]);
    const mark = c.diagnosticsLog.length;
    await c.connection.sendNotification('lightsop/setSkills', { skills: null });
    expect(unknownCommands(await c.diagnostics(plan, () => true, mark))).toEqual([]);
  });

  it('reports a skills module that cannot be loaded', async () => {
    write('lightsop.config.json', { skills: './skills.mjs' });
    write('skills.mjs', 'export default 42;\n');
    const c = await start({ initializationOptions: { trusted: true } });
    const config = await c.diagnostics(uriOf('lightsop.config.json'));
    expect(config.diagnostics[0]).toMatchObject({ code: 'skills-not-loaded', severity: 1 });
    expect(config.diagnostics[0]!.message).toBe("Skills module './skills.mjs': the default export must be a commands registry ({ listCommands, executeCommand }) or a skills map ({ NAME: { description, run } })");
  });

  it('handles watched-file notifications from a client that cannot register watchers', async () => {
    write('lightsop.config.json', { skills: './skills.json' });
    write('skills.json', { fetch: 'x', summarize: 'y' });
    const client = await start({ capabilities: { ...RICH_CAPABILITIES, workspace: { workspaceFolders: true } } });
    const plan = uriOf('plan.sop');
    await client.open(plan, PLAN);
    expect(unknownCommands(await client.diagnosticsFor(plan, 1))).toEqual([]);
    expect(client.registrations).toEqual([]);
    write('skills.json', { fetch: 'x' });
    const mark = client.diagnosticsLog.length;
    await client.connection.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: uriOf('skills.json'), type: 2 }] });
    expect(unknownCommands(await client.diagnostics(plan, () => true, mark))).toHaveLength(1);
  });

  it('picks up a workspace folder added later (workspace/didChangeWorkspaceFolders)', async () => {
    write('lightsop.config.json', { skills: './skills.json' });
    write('skills.json', { fetch: 'x' });
    const client = await start({ workspaceFolders: [] });
    const plan = uriOf('plan.sop');
    await client.open(plan, PLAN);
    expect(unknownCommands(await client.diagnosticsFor(plan, 1))).toEqual([]);
    const mark = client.diagnosticsLog.length;
    await client.connection.sendNotification('workspace/didChangeWorkspaceFolders', {
      event: { added: [ws.folder], removed: [] },
    });
    expect(unknownCommands(await client.diagnostics(plan, () => true, mark))).toHaveLength(1);
  });
});
