// ESLint: the dependency direction of ARCHITECTURE.md as rules, plus a few checks that catch
// real bugs. Formatting is not linted.
import tseslint from 'typescript-eslint';

const editor = ['vscode', 'vscode-*', 'vscode-languageserver*', 'vscode-languageclient*'];
// The distributed runner (BullMQ on Redis) is for the CLI only: nothing else may load it.
const distributed = ['bullmq', 'bullmq/*', 'ioredis', 'ioredis/*', '@lightsop/distributed*', '**/distributed/src/**'];
const distributedRule = { group: distributed, message: 'only the CLI loads the distributed runner (BullMQ, ioredis; ARCHITECTURE.md)' };

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'test-results/**', 'extension/syntaxes/**', '**/*.vsix'] },
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      'no-debugger': 'error',
      'no-dupe-keys': 'error',
      'no-self-assign': 'error',
      'no-unreachable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Typed rules: a promise nobody awaits loses its rejection (an unhandled rejection kills the
    // process or vanishes). Await it, or `void` it with a .catch that reports the error.
    files: ['packages/*/src/**/*.ts', 'extension/src/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts'],
    ignores: ['test/e2e/**'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // Spreading an array into a call passes one argument per item, and V8 overflows the stack at
    // about 125,000 (a 150k-member cycle broke lint this way). Bounded spreads may stay behind an
    // eslint-disable comment that says why they are bounded.
    files: ['packages/*/src/**/*.ts', 'extension/src/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: 'CallExpression > SpreadElement, NewExpression > SpreadElement',
        message: 'No spread into a call (fn(...items), push(...items), Math.max(...items)): about 125k items overflow the stack. Use a loop; if the array is bounded, disable this line with a comment that says why.',
      }],
    },
  },
  {
    files: ['packages/core/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: editor, message: 'core imports nothing from the editor (ARCHITECTURE.md)' },
          { group: ['node:*', 'fs', 'path', 'child_process', 'http', 'https', 'net', 'os'], message: 'core does no I/O (ARCHITECTURE.md)' },
          {
            group: ['@lightsop/*', '!@lightsop/core', '**/runtime/**', '**/sessions/**', '**/language-server/**', '**/cli/**', '**/extension/**'],
            message: 'core depends on no other package',
          },
          distributedRule,
        ],
      }],
      'no-console': 'error',
    },
  },
  {
    files: ['packages/runtime/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: editor, message: 'the runtime knows nothing of editors (ARCHITECTURE.md)' },
          {
            group: ['@lightsop/sessions*', '@lightsop/language-server*', '@lightsop/cli*', '**/sessions/**', '**/language-server/**', '**/cli/src/**'],
            message: 'the runtime imports only core: sessions build on the runtime, never the other way (ARCHITECTURE.md)',
          },
          distributedRule,
        ],
      }],
    },
  },
  {
    files: ['packages/sessions/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: editor, message: 'sessions know nothing of editors (ARCHITECTURE.md)' },
          {
            group: ['@lightsop/language-server*', '@lightsop/cli*', '**/language-server/**', '**/cli/src/**', '**/runtime/src/**'],
            message: 'sessions import core and the runtime through their public entries only',
          },
          distributedRule,
        ],
      }],
    },
  },
  {
    // The skills loader is the part of the runtime the language server imports: it stays free of
    // the interpreter and of everything that runs plans.
    files: ['packages/runtime/src/skills/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: editor, message: 'the runtime knows nothing of editors (ARCHITECTURE.md)' },
          {
            group: ['../*', '!../values', '@lightsop/*', '!@lightsop/core'],
            message: 'the skills loader (@lightsop/runtime/skills) imports only core, node and ../values: the language server bundles it',
          },
          distributedRule,
        ],
      }],
    },
  },
  {
    // The MCP client is the other part of the runtime the language server imports: core, node,
    // the SDK and the registry protocol's types only.
    files: ['packages/runtime/src/mcp/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: editor, message: 'the runtime knows nothing of editors (ARCHITECTURE.md)' },
          {
            group: ['../*', '!../skills', '../skills/*', '!../skills/registry', '@lightsop/*', '!@lightsop/core'],
            message: 'the MCP client (@lightsop/runtime/mcp) imports only core, node, the SDK and ../skills/registry: the language server bundles it',
          },
          distributedRule,
        ],
      }],
    },
  },
  {
    files: ['packages/language-server/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['vscode', 'vscode-languageclient*'], message: 'the server speaks LSP, not the VS Code API' },
          {
            regex: '^@lightsop/(runtime(?!/(skills|mcp)$)|sessions|cli)(/.*)?$|/(runtime|sessions|cli)/src/',
            message: 'the language server imports core, the skills loader (@lightsop/runtime/skills) and the MCP client (@lightsop/runtime/mcp) only',
          },
          distributedRule,
        ],
      }],
    },
  },
  {
    files: ['extension/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          distributedRule,
          {
            regex: '^@lightsop/cli|/cli/src/(?!plan-tests/runner$)',
            message: 'of the CLI the extension imports only the plan test runner (packages/cli/src/plan-tests/runner.ts), the code `lightsop test` runs',
          },
        ],
      }],
    },
  },
  {
    files: ['packages/distributed/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: editor, message: 'the distributed runner knows nothing of editors' },
          { group: ['@lightsop/cli*', '@lightsop/language-server*', '@lightsop/sessions*', '**/cli/src/**', '**/language-server/**', '**/sessions/src/**'], message: 'the distributed runner imports only core and the runtime' },
        ],
      }],
    },
  },
  {
    files: ['packages/cli/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: editor, message: 'the CLI does not use editor APIs' }] }],
    },
  },
  {
    // The plan test runner is shared with the VS Code extension: no terminal, process or command code.
    files: ['packages/cli/src/plan-tests/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: editor, message: 'the CLI does not use editor APIs' },
          { regex: '^\\.\\./(?!terminal-text$|\\.\\./\\.\\./\\.\\./schemas/plan-test\\.schema\\.json$)', message: 'the plan test runner imports only core, the runtime, its JSON libraries, the schema and ../terminal-text: the extension bundles it' },
          distributedRule,
        ],
      }],
    },
  },
);
