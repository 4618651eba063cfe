/**
 * Each subcommand of the built CLI loads only what it uses (issue 13 item 3). `lightsop lint` (and
 * fmt, graph, a local run) never load BullMQ or ioredis: the distributed runner sits in a chunk of
 * the CLI bundle that only `worker`, `batch` and `run --redis` import. Nor do they, or `chat --help`,
 * load the LLM client (`openai`, imported on a model's first request) or the agent sessions (only
 * `chat` imports them). A loader hook records every module the built CLI loads; the control cases
 * (`batch`, `chat`, an `#!english` run) show that the check does see each one when it is loaded.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli';
import { expectLoadsNone, LIGHT_COMMANDS, loadsPackage, modulesLoadedBy as loadedBy, usePlanFolder } from '../helpers/loading';

// Strings found only in BullMQ's and ioredis' code.
const loadsBullmq = (files: string[]): boolean => loadsPackage(files, /[\\/](bullmq|ioredis)[\\/]/, ['Custom Id cannot be integers', 'Connection is closed.']);

/** A string found only in the `openai` client's code (a request header it sends). */
const OPENAI_MARKER = 'X-Stainless-Retry-Count';
/** A string found only in @lightsop/sessions' code. */
const SESSIONS_MARKER = 'delegate needs an agent name and a task';

const loadsOpenai = (files: string[]): boolean => loadsPackage(files, /[\\/]openai[\\/]/, [OPENAI_MARKER]);

const loadsSessions = (files: string[]): boolean => loadsPackage(files, /[\\/]sessions[\\/]/, [SESSIONS_MARKER]);

describe('the CLI loads BullMQ and ioredis only for distributed commands', () => {
  const dir = usePlanFolder('lightsop-loading-', { 'inputs.jsonl': '"x"\n' });

  it('lint, fmt, graph and a local run do not load them', () => {
    expectLoadsNone(LIGHT_COMMANDS, dir(), { 'BullMQ or ioredis': loadsBullmq });
  });

  it('batch does (the control: the check sees them when they load)', () => {
    const res = loadedBy(['batch', 'plan.sop', '--inputs', 'inputs.jsonl', '--out', 'out.jsonl', '--redis', 'redis://127.0.0.1:1'], dir());
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/cannot reach Redis/);
    expect(loadsBullmq(res.files)).toBe(true);
  });
});

describe('the CLI loads the LLM client and the sessions only for commands that use them', () => {
  const dir = usePlanFolder('lightsop-loading-llm-', { 'english.sop': '#!english\nSay hello.\n' });

  it('lint, fmt, graph, a local run and chat --help load neither', () => {
    expectLoadsNone([...LIGHT_COMMANDS, ['chat', '--help']], dir(), { 'the LLM client': loadsOpenai, 'the sessions': loadsSessions });
  });

  it('chat loads the sessions, and an #!english run the LLM client (the controls)', () => {
    // No model is configured: chat stops with a usage error, after loading its module.
    const chat = loadedBy(['chat'], dir());
    expect(chat.code, chat.stderr).toBe(3);
    expect(loadsSessions(chat.files)).toBe(true);
    // Nothing listens on port 1: the first request fails, after the client was loaded.
    const english = loadedBy(['run', 'english.sop', '--llm-base-url', 'http://127.0.0.1:1/v1', '--llm-model', 'm', '--llm-retries', '0'], dir());
    expect(english.stderr).toMatch(/cannot reach the language model/);
    expect(loadsOpenai(english.files)).toBe(true);
  });
});

describe('the lint rule keeps the distributed runner out of core, runtime, language server and extension', () => {
  it('flags an import of bullmq, ioredis or @lightsop/distributed there, and allows it in the CLI', async () => {
    const { ESLint } = await import('eslint');
    // The text is linted under a file name that does not exist, which the typed rules' project
    // service cannot open: they are off here (this checks the import rule only).
    const eslint = new ESLint({
      cwd: repoRoot,
      overrideConfig: {
        languageOptions: { parserOptions: { projectService: false } },
        rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off' },
      },
    });
    const flagged = async (file: string, code: string) => {
      const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file) });
      return result!.messages.some((m) => m.ruleId === 'no-restricted-imports' && /only the CLI loads the distributed runner/.test(m.message));
    };
    expect(await flagged('packages/core/src/x.ts', "import { Queue } from 'bullmq';\nexport const q = Queue;\n")).toBe(true);
    expect(await flagged('packages/runtime/src/x.ts', "import { Redis } from 'ioredis';\nexport const r = Redis;\n")).toBe(true);
    expect(await flagged('packages/language-server/src/x.ts', "import { startWorker } from '@lightsop/distributed';\nexport const s = startWorker;\n")).toBe(true);
    expect(await flagged('extension/src/x.ts', "import { Worker } from 'bullmq';\nexport const w = Worker;\n")).toBe(true);
    expect(await flagged('packages/cli/src/x.ts', "export const load = () => import('@lightsop/distributed');\n")).toBe(false);
  }, 60_000);
});
