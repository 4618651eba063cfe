// The webview tests that need a browser: the Plan Graph page in Debian's Chromium, driven by
// playwright-core. They are not part of `npm test` (a fresh CI machine has no Chromium until
// test/e2e/setup.sh installed it); `npm run test:e2e` runs them (test/e2e/run.mjs), or:
//   npx vitest run --config test/webview/vitest.config.ts
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/webview/**/*.chromium.ts'],
    testTimeout: 30000,
    hookTimeout: 60000,
    pool: 'forks',
  },
});
