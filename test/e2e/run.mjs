#!/usr/bin/env node
// `npm run test:e2e`: the tests that need a browser and a real VS Code.
//   1. Sets up code-server 4.100.3, playwright-core, vsce and Debian's chromium with setup.sh
//      when they are not there yet (npm registry and apt only; ~1-2.5 min once, cached after).
//   2. Packages the extension (`npm run package`) when the .vsix is missing or older than its
//      sources.
//   3. Runs the Plan Graph page tests in Chromium (test/webview, vitest).
//   4. Runs the VS Code end-to-end test (extension.e2e.mjs) with the packaged .vsix.
// Screenshots go to test-results/e2e/. Options: --vsix FILE (use this package), --keep (keep
// code-server's run dirs), --skip-webview. Exit 0 when everything passed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const CACHE = process.env.VSCODE_HARNESS_CACHE || '/tmp/vscode-harness-cache';
const t0 = Date.now();
const log = (...a) => console.log(`[run.mjs +${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

function run(cmd, args, options = {}) {
  log('$', cmd, ...args);
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...options });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

function onPath(name) {
  return (process.env.PATH || '').split(path.delimiter).some((d) => fs.existsSync(path.join(d, name)));
}

function harnessReady() {
  return fs.existsSync(path.join(CACHE, 'code-server/node_modules/code-server/out/node/entry.js'))
    && fs.existsSync(path.join(CACHE, 'tools/node_modules/playwright-core/package.json'))
    && (Boolean(process.env.CHROMIUM) || onPath('chromium'));
}

/** Newest modification time of the files the .vsix is built from. */
function newestSource() {
  let newest = 0;
  const visit = (p) => {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      if (path.basename(p) === 'node_modules' || path.basename(p) === 'dist') return;
      for (const e of fs.readdirSync(p)) visit(path.join(p, e));
    } else newest = Math.max(newest, st.mtimeMs);
  };
  for (const p of ['extension/src', 'extension/package.json', 'extension/language-configuration.json', 'extension/images',
    'grammars/lightsoplang.tmLanguage.json', 'packages/core/src', 'packages/runtime/src', 'packages/language-server/src', 'packages/cli/src', 'scripts/build.mjs']) {
    visit(path.join(root, p));
  }
  return newest;
}

function main() {
  if (!harnessReady()) {
    log('setting up code-server, playwright-core, vsce and chromium (test/e2e/setup.sh)');
    if (run('bash', [path.join(here, 'setup.sh')]) !== 0) return 1;
  }
  const version = JSON.parse(fs.readFileSync(path.join(root, 'extension/package.json'), 'utf8')).version;
  let vsix = opt('--vsix') ? path.resolve(opt('--vsix')) : path.join(root, 'extension', `lightsoplang-${version}.vsix`);
  if (!opt('--vsix')) {
    const st = fs.statSync(vsix, { throwIfNoEntry: false });
    if (!st || st.mtimeMs < newestSource()) {
      log(st ? 'the .vsix is older than its sources: packaging' : 'no .vsix yet: packaging');
      if (run('npm', ['run', 'package']) !== 0) return 1;
    } else {
      log(`using ${path.relative(root, vsix)} (newer than its sources)`);
    }
  }
  if (!fs.existsSync(vsix)) {
    console.error(`run.mjs: ${vsix} does not exist`);
    return 1;
  }

  const shots = path.join(root, 'test-results', 'e2e');
  fs.rmSync(shots, { recursive: true, force: true });
  fs.mkdirSync(shots, { recursive: true });
  const env = { ...process.env, VSCODE_HARNESS_CACHE: CACHE, VSCODE_HARNESS_SHOTS: shots };

  let failed = 0;
  if (!argv.includes('--skip-webview')) {
    log('webview tests in Chromium (test/webview)');
    if (run('npx', ['--no-install', 'vitest', 'run', '--config', 'test/webview/vitest.config.ts'], { env }) !== 0) failed++;
  }
  log('VS Code end-to-end test (test/e2e/extension.e2e.mjs)');
  const e2eArgs = [path.join(here, 'extension.e2e.mjs'), '--vsix', vsix, ...(argv.includes('--keep') ? ['--keep'] : [])];
  if (run(process.execPath, e2eArgs, { env }) !== 0) failed++;
  log(failed ? `${failed} suite(s) failed` : 'all passed', `(screenshots in ${path.relative(root, shots)}/)`);
  return failed ? 1 : 0;
}

process.exitCode = main();
