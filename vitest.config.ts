import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  // Markdown imported by the sources (docs/language.md, served by `lightsop mcp`) is text, as the build's loader makes it.
  plugins: [{ name: 'markdown-as-text', transform: (code: string, id: string) => (id.endsWith('.md') ? { code: `export default ${JSON.stringify(code)};`, map: null } : null) }],
  resolve: {
    alias: [
      { find: /^@lightsop\/core$/, replacement: src('./packages/core/src/index.ts') },
      { find: /^@lightsop\/runtime\/compat$/, replacement: src('./packages/runtime/src/compat/index.ts') },
      { find: /^@lightsop\/runtime\/skills$/, replacement: src('./packages/runtime/src/skills/index.ts') },
      { find: /^@lightsop\/runtime\/mcp$/, replacement: src('./packages/runtime/src/mcp/index.ts') },
      { find: /^@lightsop\/runtime\/otel$/, replacement: src('./packages/runtime/src/otel/index.ts') },
      { find: /^@lightsop\/runtime$/, replacement: src('./packages/runtime/src/index.ts') },
      { find: /^@lightsop\/sessions$/, replacement: src('./packages/sessions/src/index.ts') },
      { find: /^@lightsop\/language-server$/, replacement: src('./packages/language-server/src/index.ts') },
      { find: /^@lightsop\/distributed$/, replacement: src('./packages/distributed/src/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/e2e/**'],
    testTimeout: 20000,
    pool: 'forks',
  },
});
