// One skills loader (issue 12 item 2): `lightsop run`, `lightsop lint --skills`, the language server
// (over JSON-RPC) and the extension's loader give the same answer for the same skills module — a
// module whose named exports are its skills is accepted everywhere, a module that exports neither
// a registry nor skills is refused everywhere with the same reason — with one cache-busting rule
// and one timeout.
import { rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PublishDiagnosticsParams } from 'vscode-languageserver';
import { SkillsLoadError } from '@lightsop/runtime';
import { SkillsRefusedError, loadWorkspaceSkills } from '../../extension/src/skills-loader';
import { ensureBuilt, lightsop, tempTree } from '../helpers/cli';
import { startInProcess, type TestClient } from '../protocol/helpers';

const NAMED = [
  'export const greet = { description: "Greets someone", run: ([who]) => `hello ${who}` };',
  'export const shout = { description: "Shouts", sideEffects: false, parameters: ["text"], run: ([text]) => String(text).toUpperCase() };',
  '',
].join('\n');
const NEITHER = 'export const VERSION = 3;\nexport const greet = { run: () => "hi" };\n';
const REFUSED = 'a skills module must export a commands registry ({ listCommands, executeCommand }) or a skills map ({ NAME: { description, run } }) ' +
  'as its default export, or its skills ({ description, run }) as named exports; it exports VERSION, greet';
const LINTED = '@a greet Ada\n@b gret $a\n@lastAnswer final_answer $b\n';

let client: TestClient | undefined;
beforeAll(() => ensureBuilt());
afterEach(() => {
  client?.dispose();
  client = undefined;
  delete process.env.LIGHTSOP_SKILLS_TIMEOUT;
});

/** The error a load rejects with. */
function failure(loading: Promise<unknown>): Promise<SkillsLoadError> {
  return loading.then(() => { throw new Error('the load succeeded'); }, (error: unknown) => error as SkillsLoadError);
}

/** The server's diagnostics for `plan.sop` and for the config of a trusted folder `dir`. */
async function serverView(dir: string): Promise<{ plan: PublishDiagnosticsParams; config: PublishDiagnosticsParams | undefined }> {
  client = startInProcess();
  await client.initialize({ workspaceFolders: [{ uri: pathToFileURL(dir).href, name: 'ws' }], initializationOptions: { trusted: true } });
  const configUri = pathToFileURL(path.join(dir, 'lightsop.config.json')).href;
  const uri = pathToFileURL(path.join(dir, 'plan.sop')).href;
  await client.open(uri, LINTED);
  // The plan is checked once the skills are loaded (or have failed to load).
  const plan = await client.diagnostics(uri, (p) => p.diagnostics.some((d) => d.code === 'unknown-command') || client!.diagnosticsLog.some((q) => q.uri === configUri));
  return { plan, config: client.diagnosticsLog.find((q) => q.uri === configUri) };
}

describe('a skills module whose named exports are its skills', () => {
  it('is accepted by lightsop run, lightsop lint --skills, the language server and the extension alike', async () => {
    const dir = tempTree({ 'named.mjs': NAMED, 'run.sop': '@a greet Ada\n@b shout $a\n', 'plan.sop': LINTED, 'lightsop.config.json': '{ "skills": "./named.mjs" }' });

    const run = lightsop(['run', 'run.sop', '--skills', 'named.mjs', '--json'], { cwd: dir });
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(JSON.parse(run.stdout).variables).toEqual({ a: { status: 'success', value: 'hello Ada' }, b: { status: 'success', value: 'HELLO ADA' } });

    const lint = lightsop(['lint', 'plan.sop', '--skills', 'named.mjs', '--format', 'json'], { cwd: dir });
    const linted = (JSON.parse(lint.stdout) as { diagnostics: { code: string; message: string }[] }[])[0]!.diagnostics.filter((d) => d.code === 'unknown-command');
    expect(linted.map((d) => d.message)).toEqual(["Unknown command 'gret': it is not in the skills description. Did you mean 'greet'?"]);

    const server = await serverView(dir);
    expect(server.config?.diagnostics ?? []).toEqual([]);
    expect(server.plan.diagnostics.filter((d) => d.code === 'unknown-command').map((d) => d.message)).toEqual(linted.map((d) => d.message));

    const loaded = await loadWorkspaceSkills(path.join(dir, 'named.mjs'), { trusted: true });
    expect(loaded.commands.names).toEqual(['greet', 'shout']);
    expect(loaded.commands.get('shout')).toMatchObject({ sideEffects: false, parameters: [{ name: 'text' }] });
    expect(await loaded.registry!.executeCommand({ command: 'greet', args: ['Bo'], raw: 'greet Bo', variable: 'a', lineNumber: 1, comment: '', commentLines: [] }, {
      success: (data) => ({ status: 'success', data, timestamp: 0, raw: '' }),
      fail: (data) => ({ status: 'fail', data, timestamp: 0, raw: '' }),
      cancel: (data) => ({ status: 'canceled', data, timestamp: 0, raw: '' }),
    })).toMatchObject({ status: 'success', data: 'hello Bo' });
  }, 60000);
});

describe('a skills module that exports neither a registry nor skills', () => {
  it('is refused by lightsop run, lightsop lint --skills, the language server and the extension with the same reason', async () => {
    const dir = tempTree({ 'bad.mjs': NEITHER, 'run.sop': '@a greet Ada\n', 'plan.sop': LINTED, 'lightsop.config.json': '{ "skills": "./bad.mjs" }' });

    const run = lightsop(['run', 'run.sop', '--skills', 'bad.mjs'], { cwd: dir });
    expect([run.code, run.stdout, run.stderr]).toEqual([3, '', `lightsop: bad.mjs: ${REFUSED}\n`]);

    const lint = lightsop(['lint', 'plan.sop', '--skills', 'bad.mjs'], { cwd: dir });
    expect([lint.code, lint.stderr]).toEqual([2, `lightsop: bad.mjs: ${REFUSED}\n`]);

    const server = await serverView(dir);
    expect(server.config?.diagnostics.map((d) => [d.code, d.message])).toEqual([['skills-not-loaded', `Skills module './bad.mjs': ${REFUSED}`]]);
    expect(server.plan.diagnostics.filter((d) => d.code === 'unknown-command')).toEqual([]);

    const refused = await failure(loadWorkspaceSkills(path.join(dir, 'bad.mjs'), { trusted: true }));
    expect(refused).toBeInstanceOf(SkillsLoadError);
    expect(refused.reason).toBe(REFUSED);
  }, 60000);

  it('a module with no exports at all is refused too, and the default export, when there is one, is the only one read', async () => {
    const dir = tempTree({ 'empty.mjs': 'globalThis.x = 1;\n', 'both.mjs': 'export default 42;\nexport const greet = { run: () => "hi" };\n' });
    const empty = await failure(loadWorkspaceSkills(path.join(dir, 'empty.mjs'), { trusted: true }));
    expect(empty.reason).toMatch(/as named exports; it exports nothing$/);
    const both = await failure(loadWorkspaceSkills(path.join(dir, 'both.mjs'), { trusted: true }));
    expect(both.reason).toBe('the default export must be a commands registry ({ listCommands, executeCommand }) or a skills map ({ NAME: { description, run } })');
  });
});

describe('the extension loader', () => {
  it('refuses a module in an untrusted workspace without importing it', async () => {
    const dir = tempTree({ 'named.mjs': 'globalThis.__imported = true;\n' + NAMED });
    await expect(loadWorkspaceSkills(path.join(dir, 'named.mjs'), { trusted: false })).rejects.toBeInstanceOf(SkillsRefusedError);
    expect((globalThis as { __imported?: boolean }).__imported).toBeUndefined();
  });

  it('imports an edited module afresh (ES modules and CommonJS alike) and reports a deleted one as missing', async () => {
    for (const [name, write] of [
      ['skills.mjs', (cmd: string) => `export const ${cmd} = { description: "d", run: () => "${cmd}" };\n`],
      ['skills.cjs', (cmd: string) => `module.exports = { ${cmd}: { description: "d", run: () => "${cmd}" } };\n`],
    ] as const) {
      const dir = tempTree({ [name]: write('first') });
      const file = path.join(dir, name);
      expect((await loadWorkspaceSkills(file, { trusted: true })).commands.names).toEqual(['first']);
      writeFileSync(file, write('second_one'));
      // A different size already makes a different version; a later time makes sure of it.
      utimesSync(file, new Date(), new Date(Date.now() + 5000));
      expect((await loadWorkspaceSkills(file, { trusted: true })).commands.names).toEqual(['second_one']);
      rmSync(file);
      await expect(loadWorkspaceSkills(file, { trusted: true })).rejects.toMatchObject({ problem: 'missing', reason: 'no such file' });
    }
  });
});

describe('a skills module whose top-level await never settles', () => {
  it('is an error naming it after LIGHTSOP_SKILLS_TIMEOUT, in the extension and the server as in the CLI', async () => {
    const dir = tempTree({ 'hang.mjs': 'await new Promise(() => {});\nexport const greet = { run: () => "hi" };\n', 'plan.sop': LINTED, 'lightsop.config.json': '{ "skills": "./hang.mjs" }' });
    process.env.LIGHTSOP_SKILLS_TIMEOUT = '1s';
    const reason = 'the skills module did not finish loading within 1 s (LIGHTSOP_SKILLS_TIMEOUT sets the limit)';
    const late = await failure(loadWorkspaceSkills(path.join(dir, 'hang.mjs'), { trusted: true }));
    expect([late.file, late.reason]).toEqual([path.join(dir, 'hang.mjs'), reason]);
    const server = await serverView(dir);
    expect(server.config?.diagnostics.map((d) => d.message)).toEqual([`Skills module './hang.mjs': ${reason}`]);
  }, 60000);
});
