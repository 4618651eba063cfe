// Lint Workspace and an invalid lightsop.config.json: refused as `lightsop lint` refuses it (exit
// 3, a message naming the file and the field), with the problem on the config file at the
// field, instead of linting every plan of the folder without the config.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkConfig, readFolderConfig } from '../../extension/src/lint-plans';
import { ensureBuilt, lightsop, tempTree } from '../helpers/cli';
import { startInProcess } from '../protocol/helpers';

/** What `lightsop lint` says about a folder with this config: its exit code and its one error line. */
function cliVerdict(dir: string): { code: number; message: string } {
  ensureBuilt();
  const run = lightsop(['lint', 'plans'], { cwd: dir });
  return { code: run.code, message: run.stderr.trim().replace(/^lightsop: /, '') };
}

const PLANS = { 'plans/a.sop': '@a assign 1\n@lastAnswer final_answer $a\n' };

describe('Lint Workspace refuses an invalid config as lightsop lint does', () => {
  const cases: [string, string][] = [
    ['a field of the wrong type', '{\n  "skills": "./skills.json",\n  "plans": 5\n}\n'],
    ['invalid JSON', '{ "plans": ["**/*.sop"], '],
    ['an API key in the config', '{ "llm": { "baseUrl": "http://127.0.0.1:1/v1", "model": "m", "apiKey": "sk-1" } }'],
    ['not an object', '["plans"]'],
  ];
  for (const [what, text] of cases) {
    it(`${what}: the same message, naming the file and the field`, async () => {
      const dir = tempTree({ ...PLANS, 'lightsop.config.json': text });
      const cli = cliVerdict(dir);
      expect(cli.code).toBe(3);
      const check = await readFolderConfig(dir);
      expect(check).toMatchObject({ ok: false });
      if (!check || check.ok) throw new Error('unreachable');
      expect(check.message).toBe(cli.message);
      expect(check.message.startsWith(`${path.join(dir, 'lightsop.config.json')}: `)).toBe(true);
      expect(check.diagnostic).toMatchObject({ severity: 'error', code: 'invalid-config' });
      // The diagnostic names the file as the language server's does; the CLI gives its path.
      expect(check.diagnostic.message.startsWith('lightsop.config.json: ')).toBe(true);
      expect(cli.message.endsWith(`/${check.diagnostic.message}`)).toBe(true);
    }, 60_000);
  }

  it('puts the diagnostic on the field, in the editor\'s positions', () => {
    const check = checkConfig('/w/lightsop.config.json', '{\n  "skills": "./skills.json",\n  "plans": 5\n}\n');
    expect(check).toMatchObject({
      ok: false,
      diagnostic: { range: { start: { line: 2, character: 11 }, end: { line: 2, character: 12 } }, message: 'lightsop.config.json: field "plans" must be an array of glob strings' },
    });
  });

  it('a config that is a FIFO is not read (it would block), and is refused as the CLI refuses it', async () => {
    const dir = tempTree(PLANS);
    execFileSync('mkfifo', [path.join(dir, 'lightsop.config.json')]);
    const cli = cliVerdict(dir);
    expect(cli).toEqual({ code: 3, message: `${path.join(dir, 'lightsop.config.json')}: cannot read (not a regular file)` });
    expect(await readFolderConfig(dir)).toMatchObject({ ok: false, message: cli.message });
  }, 60_000);

  it('a valid config gives its plans globs; no config gives none and lints every plan', async () => {
    const dir = tempTree({ ...PLANS, 'lightsop.config.json': '{ "plans": ["plans/**/*.sop"] }' });
    expect(await readFolderConfig(dir)).toEqual({ ok: true, plans: ['plans/**/*.sop'] });
    expect(cliVerdict(dir).code).toBe(0);
    expect(await readFolderConfig(tempTree(PLANS))).toBeNull();
  }, 60_000);

  it('words and places the problem as the language server does on the same file, so one entry can stand for both', async () => {
    const text = '{\n  "skills": "./skills.json",\n  "plans": 5\n}\n';
    const dir = tempTree({ ...PLANS, 'lightsop.config.json': text, 'skills.json': '{ "commands": [] }' });
    const client = startInProcess();
    try {
      await client.initialize({ workspaceFolders: [{ uri: pathToFileURL(dir).href, name: 'ws' }] });
      const published = await client.diagnostics(pathToFileURL(path.join(dir, 'lightsop.config.json')).href);
      const check = checkConfig(path.join(dir, 'lightsop.config.json'), text);
      if (check.ok) throw new Error('the config should be refused');
      expect(published.diagnostics[0]).toMatchObject({ range: check.diagnostic.range, message: check.diagnostic.message, code: check.diagnostic.code, severity: 1 });
    } finally {
      client.dispose();
    }
  });
});
