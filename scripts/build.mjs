// Builds every package with esbuild. Type checking is separate (`npm run typecheck`).
// Libraries keep their npm dependencies external; the CLI and the language server are bundled
// into single files so that they start fast; the extension bundles everything but `vscode`.
// The CLI is split: @lightsop/distributed, with BullMQ and ioredis bundled in, lands in a chunk
// of its own that only `worker`, `batch` and `run --redis` import, so no other command ever loads
// it. msgpackr's optional native add-on stays external (msgpackr falls back to JavaScript).
// The language server's entry, dist/server.cjs, is a small file that loads the server,
// dist/server-main.cjs, through a V8 code cache (packages/language-server/src/entry.ts).
// A plain `lightsop lint` runs from a CommonJS bundle of its own, `dist/lint.cjs` (loaded by
// bin/lightsop.js with a V8 code cache): no commander, no other command. Chevrotain (only for a
// header with a broken quoted token), tinyglobby (only when globbing) and node:crypto are not in
// it: `lazyRequire` stubs them with functions that require `dist/lint-*.cjs` on first call.
import { build } from 'esbuild';
import { chmodSync, cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const p = (...parts) => path.join(root, ...parts);

// Workspace packages resolve to their TypeScript sources, so one build needs no ordering.
const alias = {
  '@lightsop/core': p('packages/core/src/index.ts'),
  '@lightsop/runtime/compat': p('packages/runtime/src/compat/index.ts'),
  '@lightsop/runtime/skills': p('packages/runtime/src/skills/index.ts'),
  '@lightsop/runtime/mcp': p('packages/runtime/src/mcp/index.ts'),
  '@lightsop/runtime/otel': p('packages/runtime/src/otel/index.ts'),
  '@lightsop/runtime': p('packages/runtime/src/index.ts'),
  '@lightsop/sessions': p('packages/sessions/src/index.ts'),
  '@lightsop/language-server': p('packages/language-server/src/index.ts'),
  '@lightsop/distributed': p('packages/distributed/src/index.ts'),
};
const libExternal = ['chevrotain', '@dagrejs/graphlib', 'openai', '@modelcontextprotocol/*', '@opentelemetry/*', '@lightsop/*'];
// ESM bundles that contain CommonJS dependencies need `require`.
const esmBanner = { js: "import { createRequire as __lsCreateRequire } from 'node:module'; const require = __lsCreateRequire(import.meta.url);" };

// The modules the lint bundle loads on first use, each a CommonJS bundle beside it.
const lazyModules = [
  { name: 'lint-broken-header.cjs', match: p('packages/core/src/syntax/broken-header.ts'), exports: ['readBrokenHeader'], entry: 'packages/core/src/syntax/broken-header.ts' },
  { name: 'lint-glob.cjs', match: 'tinyglobby', exports: ['globSync', 'isDynamicPattern'], contents: "module.exports = require('tinyglobby');" },
  { name: 'node:crypto', match: 'node:crypto', exports: ['randomBytes', 'randomUUID', 'createHash'] },
  // The runtime only describes an unexpected error there.
  { name: 'lint-runtime.cjs', match: '@lightsop/runtime', exports: ['errorText'], contents: "export { errorText } from '@lightsop/runtime';" },
];
// The lint bundle never starts MCP servers: lint-fast.ts leaves a plan whose config has them to
// the full CLI, so these are never called there.
const absentInLint = `const absent = () => { throw new Error('the lint entry does not start MCP servers'); };
export const mcpStartTimeoutMs = absent; export const withMcpTools = absent; export const progressText = absent;
export class McpTimeoutSettingError extends Error {}
export const McpToolSet = { open: absent };`;

/** An esbuild plugin replacing each lazy module by functions that require it on first call. */
const lazyRequire = {
  name: 'lazy-require',
  setup(b) {
    b.onResolve({ filter: /^\.\/lint-.*\.cjs$/ }, (args) => ({ path: args.path, external: true }));
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'lazy' || args.namespace === 'lazy') return undefined;
      if (args.path === '@lightsop/runtime/mcp') return { path: 'absent-mcp', namespace: 'lazy' };
      const direct = lazyModules.find((m) => m.match === args.path);
      if (direct) return { path: direct.name, namespace: 'lazy' };
      if (!args.path.startsWith('.')) return undefined;
      const resolved = path.resolve(args.resolveDir, args.path);
      const m = lazyModules.find((x) => x.match === resolved || x.match === `${resolved}.ts`);
      return m ? { path: m.name, namespace: 'lazy' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy' }, (args) => {
      if (args.path === 'absent-mcp') return { contents: absentInLint, loader: 'js' };
      const target = args.path.startsWith('node:') ? args.path : `./${args.path}`;
      const body = lazyModules.find((m) => m.name === args.path).exports
        .map((e) => `export function ${e}(...a) { return require(${JSON.stringify(target)}).${e}(...a); }`).join('\n');
      return { contents: body, loader: 'js' };
    });
  },
};

const targets = [
  { entry: 'packages/core/src/index.ts', out: 'packages/core/dist/index.js', format: 'esm', external: libExternal },
  { entry: 'packages/runtime/src/index.ts', out: 'packages/runtime/dist/index.js', format: 'esm', external: libExternal },
  { entry: 'packages/runtime/src/compat/index.ts', out: 'packages/runtime/dist/compat.js', format: 'esm', external: libExternal },
  { entry: 'packages/runtime/src/skills/index.ts', out: 'packages/runtime/dist/skills.js', format: 'esm', external: libExternal },
  { entry: 'packages/runtime/src/mcp/index.ts', out: 'packages/runtime/dist/mcp.js', format: 'esm', external: libExternal },
  { entry: 'packages/runtime/src/otel/index.ts', out: 'packages/runtime/dist/otel.js', format: 'esm', external: libExternal },
  { entry: 'packages/sessions/src/index.ts', out: 'packages/sessions/dist/index.js', format: 'esm', external: libExternal },
  { entry: 'packages/distributed/src/index.ts', out: 'packages/distributed/dist/index.js', format: 'esm', external: [...libExternal, 'bullmq', 'ioredis'] },
  { entry: 'packages/cli/src/main.ts', out: 'packages/cli/dist/main.js', format: 'esm', bundleAll: true, splitting: true, external: ['msgpackr-extract'], banner: esmBanner },
  { entry: 'packages/cli/src/lint-fast.ts', out: 'packages/cli/dist/lint.cjs', format: 'cjs', bundleAll: true, plugins: [lazyRequire] },
  ...lazyModules.filter((m) => m.name.endsWith('.cjs')).map((m) => ({
    entry: m.entry, contents: m.contents, out: `packages/cli/dist/${m.name}`, format: 'cjs', bundleAll: true,
  })),
  // The language server: dist/server.cjs is the entry, which loads the server, dist/server-main.cjs, through a V8 code cache.
  { entry: 'packages/language-server/src/main.ts', out: 'packages/language-server/dist/server-main.cjs', format: 'cjs', bundleAll: true },
  { entry: 'packages/language-server/src/entry.ts', out: 'packages/language-server/dist/server.cjs', format: 'cjs', bundleAll: true },
  // One copy of ajv 8 in the extension: the MCP SDK, ajv-formats and the plan test runner each
  // resolve their own (identical) copy otherwise.
  { entry: 'extension/src/extension.ts', out: 'extension/dist/extension.cjs', format: 'cjs', bundleAll: true, external: ['vscode'], alias: { ajv: p('packages/cli/node_modules/ajv') } },
  // OpenTelemetry for Run Plan's traces, a file of its own that the extension imports only when traces are on.
  { entry: 'packages/runtime/src/otel/index.ts', out: 'extension/dist/otel.cjs', format: 'cjs', bundleAll: true },
  // The language server again, inside the extension, so that the .vsix is self-contained.
  { entry: 'packages/language-server/src/main.ts', out: 'extension/dist/server-main.cjs', format: 'cjs', bundleAll: true },
  { entry: 'packages/language-server/src/entry.ts', out: 'extension/dist/server.cjs', format: 'cjs', bundleAll: true },
  { entry: 'extension/src/graph/webview.ts', out: 'extension/dist/graph-webview.js', format: 'iife', bundleAll: true, platform: 'browser' },
  { entry: 'extension/src/chat/webview.ts', out: 'extension/dist/chat-webview.js', format: 'iife', bundleAll: true, platform: 'browser' },
  { entry: 'extension/src/timeline/webview.ts', out: 'extension/dist/timeline-webview.js', format: 'iife', bundleAll: true, platform: 'browser' },
];

const started = Date.now();
let built = 0;
for (const t of targets) {
  if (t.entry ? !existsSync(p(t.entry)) : !t.contents) continue;
  mkdirSync(path.dirname(p(t.out)), { recursive: true });
  // A split bundle writes its entry under its own name and its chunks beside it; old chunks go.
  const output = t.splitting
    ? { outdir: path.dirname(p(t.out)), splitting: true, entryNames: path.basename(t.out, '.js'), chunkNames: 'chunks/[name]-[hash]' }
    : { outfile: p(t.out) };
  if (t.splitting) rmSync(path.join(path.dirname(p(t.out)), 'chunks'), { recursive: true, force: true });
  await build({
    ...(t.entry ? { entryPoints: [p(t.entry)] } : { stdin: { contents: t.contents, resolveDir: root, loader: 'js' } }),
    ...output,
    bundle: true,
    platform: t.platform ?? 'node',
    target: t.platform === 'browser' ? 'es2022' : 'node20',
    format: t.format,
    sourcemap: 'linked',
    alias: { ...alias, ...t.alias },
    external: t.bundleAll ? (t.external ?? []) : t.external,
    banner: t.banner,
    plugins: t.plugins ?? [],
    logLevel: 'warning',
    legalComments: 'none',
    // docs/language.md is served by `lightsop mcp` as a resource: imported as text.
    loader: { '.md': 'text' },
    mainFields: t.platform === 'browser' ? ['browser', 'module', 'main'] : ['module', 'main'],
  });
  built++;
}
// The extension offers `lightsop mcp` to VS Code's agent mode (extension/src/mcp-server.ts): it
// ships the CLI bundle as it is, marked as ES modules for the folder.
if (existsSync(p('packages/cli/dist/main.js')) && existsSync(p('extension/package.json'))) {
  const cliOut = p('extension/dist/cli');
  rmSync(cliOut, { recursive: true, force: true });
  cpSync(p('packages/cli/dist'), cliOut, { recursive: true, filter: (src) => !src.endsWith('.map') });
  writeFileSync(path.join(cliOut, 'package.json'), '{ "type": "module" }\n');
}
for (const bin of ['packages/cli/bin/lightsop.js', 'packages/language-server/bin/lightsop-language-server.cjs']) {
  if (existsSync(p(bin))) chmodSync(p(bin), 0o755);
}
console.log(`built ${built} bundles in ${Date.now() - started} ms`);
