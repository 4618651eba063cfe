// The built entry point: a plain Node script at the repository root imports
// `@lightsop/runtime/compat` through the package's exports (packages/runtime/dist/compat.js).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(__dirname, '../..');
const bundle = path.join(repoRoot, 'packages/runtime/dist/compat.js');

/** The script a user would write after switching the import. */
const script = `
import LightSOPLangInterpreter, { LightSOPLangInterpreter as Named, DefaultExecutionMonitor, cancelEuristic, parseCode, createSuccessValue } from '@lightsop/runtime/compat';

const history = [];
const registry = {
  async executeCommand({ command, args }, response) {
    history.push([command, ...args].join(' '));
    if (command === 'emit') return response.success(args[0] ?? '');
    if (command === 'combine') return response.success(args.join('+'));
    if (command === 'final_answer') return response.success(args[0]);
    throw new Error('Unknown command ' + command);
  },
  listCommands: () => [{ name: 'emit', description: 'emit' }, { name: 'combine', description: 'combine' }, { name: 'final_answer', description: 'answer' }],
};
const monitor = new DefaultExecutionMonitor();
const interpreter = new LightSOPLangInterpreter('@source emit foo\\n@final combine $source $input', registry, 'IN', { executionMonitor: monitor });
await interpreter.ready;
const invalid = new Named('@a emit 1\\n@a emit 2', registry);
const error = await invalid.ready.then(() => null, (e) => e.message);
const agent = { executePrompt: async () => '@x emit planned\\n@lastAnswer final_answer $x' };
const english = new LightSOPLangInterpreter('#!english\\nplan something', registry, { llmAgent: agent });
await english.ready;
console.log(JSON.stringify({
  resolved: import.meta.resolve('@lightsop/runtime/compat'),
  same: LightSOPLangInterpreter === Named,
  final: interpreter.getVarValue('final'),
  history,
  stats: monitor.getStats().commandsExecuted,
  variables: [...interpreter.variables.keys()],
  error,
  english: english.getVarValue('lastAnswer'),
  heuristic: cancelEuristic('Cancel: later').reason,
  parsed: parseCode('@a emit $b').get('a').arguments,
  value: createSuccessValue('v').status,
}));
`;

describe('built @lightsop/runtime/compat', () => {
  it('imports from a plain Node script at the repository root', () => {
    if (!existsSync(bundle)) execFileSync(process.execPath, [path.join(repoRoot, 'scripts/build.mjs')], { cwd: repoRoot, stdio: 'ignore' });
    const res = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8', timeout: 30000 });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out).toEqual({
      resolved: pathToFileURL(bundle).href,
      same: true,
      final: 'foo+IN',
      history: ['emit foo', 'combine foo IN', 'emit planned', 'final_answer planned'],
      stats: 2,
      variables: ['source', 'final', 'input'],
      error: 'Variable a declared multiple times',
      english: 'planned',
      heuristic: 'later',
      parsed: [{ type: 'variable', name: 'b' }],
      value: 'success',
    });
  });
});
