#!/usr/bin/env node
// The `lightsop` command. A plain `lightsop lint` (the common case in editors, hooks and CI) runs
// from dist/lint.cjs, a small CommonJS bundle without commander and without the other commands,
// compiled with a V8 code cache kept in a private folder (see `lintEntry`); everything else, and
// any `lint` that bundle does not handle as plain, runs the full CLI, dist/main.js. This file is
// CommonJS (bin/package.json) so that the lint path pays for no ES module loading.
'use strict';

const argv = process.argv.slice(2);

function fullCli() {
  // Node 22.1+ keeps the code it compiled in a cache between runs, so the CLI starts faster;
  // older versions (Node 20) have no such cache and skip this.
  const module = require('node:module');
  module.enableCompileCache?.();
  return import('../dist/main.js');
}

/**
 * The cache folder of compiled code: private to this user (created 0700, and not used when it is
 * a link, someone else's, or writable by others), so nobody else can hand this process code.
 * LIGHTSOP_CODE_CACHE=0 turns the cache off.
 */
function cacheDir(fs, path) {
  if (process.env.LIGHTSOP_CODE_CACHE === '0') return null;
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  const dir = path.join(require('node:os').tmpdir(), `lightsop-code-cache-${uid ?? 'user'}`);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch {
    // It exists already (checked below), or cannot be made (no cache then).
  }
  try {
    const st = fs.lstatSync(dir);
    if (!st.isDirectory() || (uid !== null && st.uid !== uid) || (st.mode & 0o077) !== 0) return null;
    return dir;
  } catch {
    return null;
  }
}

/** Loads dist/lint.cjs as `require` would, with compiled code from the cache when it has some. */
function lintEntry() {
  const fs = require('node:fs');
  const path = require('node:path');
  const vm = require('node:vm');
  const Module = require('node:module');
  const filename = path.join(__dirname, '..', 'dist', 'lint.cjs');
  const source = fs.readFileSync(filename, 'utf8');
  let cacheFile = null;
  let cached;
  try {
    const dir = cacheDir(fs, path);
    if (dir) {
      // The file's identity and nanosecond mtime: a rebuilt bundle never meets the old code (V8
      // itself only checks the source's length).
      const st = fs.statSync(filename, { bigint: true });
      let h = 0x811c9dc5;
      for (let i = 0; i < filename.length; i++) h = Math.imul(h ^ filename.charCodeAt(i), 0x01000193);
      const key = `lint-${(h >>> 0).toString(16)}-${st.ino}-${st.size}-${st.mtimeNs}-${process.version}-${process.arch}`;
      cacheFile = path.join(dir, `${key}.bin`);
      try {
        cached = fs.readFileSync(cacheFile);
      } catch {
        cached = undefined;
      }
    }
  } catch {
    cacheFile = null;
  }
  const script = new vm.Script(Module.wrap(source), {
    filename,
    cachedData: cached,
  });
  if (cacheFile && (cached === undefined || script.cachedDataRejected)) {
    // Written at exit, so that it holds the functions this run compiled too.
    process.once('exit', () => {
      try {
        const temp = `${cacheFile}.${process.pid}.tmp`;
        fs.writeFileSync(temp, script.createCachedData(), { mode: 0o600 });
        fs.renameSync(temp, cacheFile);
        // The code of earlier builds of this same file is of no use any more.
        const dir = path.dirname(cacheFile);
        const own = path.basename(cacheFile);
        const prefix = own.split('-', 2).join('-') + '-';
        for (const name of fs.readdirSync(dir)) {
          if (name !== own && name.startsWith(prefix) && name.endsWith('.bin')) fs.rmSync(path.join(dir, name), { force: true });
        }
      } catch {
        // No cache this time.
      }
    });
  }
  const mod = new Module(filename, module);
  mod.filename = filename;
  mod.paths = Module._nodeModulePaths(path.dirname(filename));
  Module._cache[filename] = mod;
  const requireHere = (id) => mod.require(id);
  script.runInThisContext().call(mod.exports, mod.exports, requireHere, mod, filename, path.dirname(filename));
  mod.loaded = true;
  return mod.exports;
}

let lint = null;
if (argv[0] === 'lint') {
  try {
    lint = lintEntry();
  } catch {
    // A build without dist/lint.cjs: the full CLI lints as well.
    lint = null;
  }
}
if (lint) {
  void lint.startPlainLint(argv, (url) => import(url)).then((done) => (done ? undefined : fullCli()));
} else {
  void fullCli();
}
