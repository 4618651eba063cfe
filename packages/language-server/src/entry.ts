/**
 * The entry editors start (bundled to `dist/server.cjs`; the bin and the extension run it). It
 * loads the server itself, `dist/server-main.cjs`, as `require` would, but compiled through a V8
 * code cache, so that a new server does not parse and compile its 2 MB bundle again: the cache
 * is written when a server that had none exits (with the functions it ran compiled too) and read
 * by the next one. It lives in a folder private to the user under the temporary directory (created
 * 0700, and not used when it is a link, someone else's or open to others), never in a workspace,
 * so nobody else can hand the server code; a cache V8 rejects (another build, another Node) is
 * replaced. `LIGHTSOP_CODE_CACHE=0` turns it off. Code compiled this way has no module loader
 * for `import()`, so this file, which Node's loader did compile, hands the server its `import`
 * for skills modules.
 */
import fs from 'node:fs';
import Module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';

interface ServerMain {
  /** True when the process serves a connection (not for `--version` or `--help`). */
  start(importModule: (url: string) => Promise<unknown>): boolean;
}

const importModule = (url: string): Promise<unknown> => import(url);

/** The private cache folder, or null when there is none to trust. */
function cacheFolder(): string | null {
  if (process.env.LIGHTSOP_CODE_CACHE === '0') return null;
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  const dir = path.join(os.tmpdir(), `lightsop-code-cache-${uid ?? 'user'}`);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch {
    // It exists already (checked below), or cannot be made (no cache then).
  }
  try {
    const st = fs.lstatSync(dir);
    return st.isDirectory() && (uid === null || st.uid === uid) && (st.mode & 0o077) === 0 ? dir : null;
  } catch {
    return null;
  }
}

/** The cache file of this exact bundle: its path, identity and modification time, and this Node. */
function cacheFileFor(dir: string, filename: string): { file: string; prefix: string } {
  const st = fs.statSync(filename, { bigint: true });
  let h = 0x811c9dc5;
  for (let i = 0; i < filename.length; i++) h = Math.imul(h ^ filename.charCodeAt(i), 0x01000193);
  const prefix = `server-${(h >>> 0).toString(16)}-`;
  return { file: path.join(dir, `${prefix}${st.ino}-${st.size}-${st.mtimeNs}-${process.version}-${process.arch}.bin`), prefix };
}

/** Runs `filename` as a CommonJS module compiled with `cachedData`; returns its exports and the compiled script. */
function runCompiled(filename: string, cachedData: Buffer | undefined): { exports: unknown; script: vm.Script } {
  const script = new vm.Script(Module.wrap(fs.readFileSync(filename, 'utf8')), { filename, cachedData });
  const mod = new Module(filename, module);
  mod.filename = filename;
  const internals = Module as unknown as { _nodeModulePaths(dir: string): string[]; _cache: Record<string, Module> };
  mod.paths = internals._nodeModulePaths(path.dirname(filename));
  internals._cache[filename] = mod;
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(mod.exports, mod.exports, (id: string) => mod.require(id), mod, filename, path.dirname(filename));
  mod.loaded = true;
  return { exports: mod.exports, script };
}

/** Writes the compiled code of `script` when the process exits, and removes the caches of earlier builds. */
function saveAtExit(script: vm.Script, dir: string, file: string, prefix: string): void {
  process.once('exit', () => {
    try {
      const temp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(temp, script.createCachedData(), { mode: 0o600 });
      fs.renameSync(temp, file);
      for (const name of fs.readdirSync(dir)) {
        if (name.startsWith(prefix) && name.endsWith('.bin') && path.join(dir, name) !== file) fs.rmSync(path.join(dir, name), { force: true });
      }
    } catch {
      // No cache this time.
    }
  });
}

/** Loads and starts the server; the cache is written at exit when it had none that fits and served a connection. */
function run(): void {
  const filename = path.join(__dirname, 'server-main.cjs');
  let cache: { dir: string; file: string; prefix: string; data: Buffer | undefined } | null = null;
  try {
    const dir = cacheFolder();
    if (dir) {
      const { file, prefix } = cacheFileFor(dir, filename);
      let data: Buffer | undefined;
      try {
        data = fs.readFileSync(file);
      } catch {
        data = undefined;
      }
      cache = { dir, file, prefix, data };
    }
  } catch {
    cache = null;
  }
  if (!cache) {
    (require(filename) as ServerMain).start(importModule);
    return;
  }
  const { exports, script } = runCompiled(filename, cache.data);
  const serving = (exports as ServerMain).start(importModule);
  // Written after a run that served, so that it holds the code a server runs, not `--version`'s.
  if (serving && (cache.data === undefined || script.cachedDataRejected)) saveAtExit(script, cache.dir, cache.file, cache.prefix);
}

run();
