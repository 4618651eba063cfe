// Builds every package with esbuild. Type checking is separate (`npm run typecheck`).
// Libraries keep their npm dependencies external; the CLI and the language server are bundled
// into single files so that they start fast; the extension bundles everything but `vscode`.
// The CLI is split: @lightsop/distributed, with BullMQ and ioredis bundled in, lands in a chunk
// of its own that only `worker`, `batch` and `run --redis` import, so no other command ever loads
// it. msgpackr's optional native add-on stays external (msgpackr falls back to JavaScript).
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
  { entry: 'packages/language-server/src/main.ts', out: 'packages/language-server/dist/server.cjs', format: 'cjs', bundleAll: true },
  // One copy of ajv 8 in the extension: the MCP SDK, ajv-formats and the plan test runner each
  // resolve their own (identical) copy otherwise.
  { entry: 'extension/src/extension.ts', out: 'extension/dist/extension.cjs', format: 'cjs', bundleAll: true, external: ['vscode'], alias: { ajv: p('packages/cli/node_modules/ajv') } },
  // OpenTelemetry for Run Plan's traces, a file of its own that the extension imports only when traces are on.
  { entry: 'packages/runtime/src/otel/index.ts', out: 'extension/dist/otel.cjs', format: 'cjs', bundleAll: true },
  // The language server again, inside the extension, so that the .vsix is self-contained.
  { entry: 'packages/language-server/src/main.ts', out: 'extension/dist/server.cjs', format: 'cjs', bundleAll: true },
  { entry: 'extension/src/graph/webview.ts', out: 'extension/dist/graph-webview.js', format: 'iife', bundleAll: true, platform: 'browser' },
  { entry: 'extension/src/chat/webview.ts', out: 'extension/dist/chat-webview.js', format: 'iife', bundleAll: true, platform: 'browser' },
  { entry: 'extension/src/timeline/webview.ts', out: 'extension/dist/timeline-webview.js', format: 'iife', bundleAll: true, platform: 'browser' },
];

const started = Date.now();
let built = 0;
for (const t of targets) {
  if (!existsSync(p(t.entry))) continue;
  mkdirSync(path.dirname(p(t.out)), { recursive: true });
  // A split bundle writes its entry under its own name and its chunks beside it; old chunks go.
  const output = t.splitting
    ? { outdir: path.dirname(p(t.out)), splitting: true, entryNames: path.basename(t.out, '.js'), chunkNames: 'chunks/[name]-[hash]' }
    : { outfile: p(t.out) };
  if (t.splitting) rmSync(path.join(path.dirname(p(t.out)), 'chunks'), { recursive: true, force: true });
  await build({
    entryPoints: [p(t.entry)],
    ...output,
    bundle: true,
    platform: t.platform ?? 'node',
    target: t.platform === 'browser' ? 'es2022' : 'node20',
    format: t.format,
    sourcemap: 'linked',
    alias: { ...alias, ...t.alias },
    external: t.bundleAll ? (t.external ?? []) : t.external,
    banner: t.banner,
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
