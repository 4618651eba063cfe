/**
 * `lightsop`: the command-line entry point. Argument parsing is commander's; every command is a
 * function of its options and an Io, so tests can run it in-process. Errors are one line on
 * stderr with the contract's exit code, never a stack trace (set LIGHTSOP_DEBUG=1 to see one).
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { DIAGNOSTIC_CODES } from '@lightsop/core';
import pkg from '../package.json';
import type { ProcessSignals } from './commands/run';
import { formatSeconds, parseDuration } from './duration';
import { CliError, usageExitCode } from './errors';
import { exitAfterOutput, workLeftBehind } from './idle';
import { closeMcpServers } from './mcp';
import { guardStream, outputFailureExit, type Io } from './io';
import { DEFAULT_GRACE_MS } from './defaults';
import { baseUrlProblem } from './llm-url';
import { guardIo, rememberEnvironmentSecrets, terminalText } from './terminal-text';

/** A commander parser for a duration option (see `parseDuration`). */
function durationOption(options: { allowZero?: boolean } = {}) {
  return (value: string): number => {
    try {
      return parseDuration(value, options);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  };
}

function positiveInt(value: string): number {
  const n = nonNegativeInt(value);
  if (n === 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

/** The real process as an Io; `failureExit` is the exit code when stdout cannot be written. */
export function processIo(failureExit = 2): Io {
  const isTTY = Boolean(process.stdout.isTTY);
  const err = guardStream(process.stderr, 'standard error', failureExit, () => {});
  const out = guardStream(process.stdout, 'standard output', failureExit, (line) => err.write(line));
  const color = process.env.NO_COLOR ? false : process.env.FORCE_COLOR ? process.env.FORCE_COLOR !== '0' : isTTY;
  let cwd: string;
  try {
    cwd = process.cwd();
  } catch (error) {
    // Node cannot name the directory a shell sits in after it was deleted (ENOENT, uv_cwd).
    throw new CliError(`the current directory cannot be read (${entryErrorText(error)}): was it deleted or moved? Change to an existing directory.`, failureExit);
  }
  return {
    cwd,
    isTTY,
    color,
    version: pkg.version,
    columns: process.stdout.columns,
    rows: process.stdout.rows,
    stdout: (text) => out.write(text),
    stderr: (text) => err.write(text),
  };
}

/** The LLM options `run` and `chat` share. */
function addLlmOptions(command: Command, baseUrlHelp: string, modelHelp: string): Command {
  return command
    .option('--llm-base-url <url>', baseUrlHelp, (value: string) => {
      const problem = baseUrlProblem(value);
      if (problem) throw new InvalidArgumentError(problem);
      return value;
    })
    .option('--llm-model <name>', modelHelp)
    .option('--llm-timeout <duration>', 'give up on a model request attempt after this long (default 2m; config "llm.timeout")', durationOption())
    .option('--llm-retries <n>', 'retries of a failed model request: connection errors, timeouts, 429, 5xx (default 3; config "llm.retries")', nonNegativeInt)
    .option('--max-tokens <n>', 'token budget (input + output, as the provider reports them): no model request starts once it is spent (config "llm.maxTokens")', positiveInt)
    .option('--otel', 'export OpenTelemetry traces over OTLP/HTTP (also on when OTEL_EXPORTER_OTLP_ENDPOINT is set; docs/tracing.md)');
}

/** Builds the program; each action stores its exit code in `result.code`. */
export function buildProgram(io: Io, result: { code: number }): Command {
  const program = new Command('lightsop')
    .description('Lint, run, format and graph LightSOPLang plans')
    .version(io.version, '-v, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
      outputError: (s, write) => write(`lightsop: ${terminalText(s.replace(/^error: /, ''), { multiline: true })}`),
    });

  program
    .command('lint')
    .description('check plans: syntax, topology, unknown commands and unused variables')
    .argument('[paths...]', 'files, folders, globs, or - for standard input (default: the config\'s "plans", else **/*.sop)')
    .option('--skills <file>', 'skills description (JSON) or skills module; overrides lightsop.config.json')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json', 'sarif', 'github']).default('text'))
    .option('--max-warnings <n>', 'exit 1 when there are more warnings than this', nonNegativeInt)
    .option('-q, --quiet', 'report errors only')
    .addHelpText('after', `\nDiagnostic codes (stable):\n${DIAGNOSTIC_CODES.map((c) => `  ${c.code.padEnd(26)} ${c.severity === 'error' ? 'error  ' : 'warning'}  ${c.summary}`).join('\n')}\n\nExit codes: 0 no errors (warnings within --max-warnings), 1 otherwise, 2 usage or I/O error, 3 invalid lightsop.config.json.`)
    .action(async (paths: string[], opts) => {
      const { lintCommand } = await import('./commands/lint');
      result.code = await lintCommand(paths, opts, io);
    });

  program
    .command('fmt')
    .description('format plans: canonical spacing and alignment (never changes what a plan means)')
    .argument('[paths...]', 'files, folders, globs, or - for standard input')
    .option('--check', 'exit 1 and list the files that are not formatted')
    .option('--write', 'rewrite the files in place')
    .action(async (paths: string[], opts) => {
      const { fmtCommand } = await import('./commands/fmt');
      result.code = await fmtCommand(paths, opts, io);
    });

  program
    .command('graph')
    .description('print the dependency graph of a plan')
    .argument('<plan>', 'the plan file, or - for standard input')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['dot', 'mermaid', 'json']).default('dot'))
    .action(async (plan: string, opts) => {
      const { graphCommand } = await import('./commands/graph');
      result.code = await graphCommand(plan, opts, io);
    });

  const run = program
    .command('run')
    .description('run a plan with a skills module')
    .argument('<plan>', 'the plan file, or - for standard input')
    .option('--skills <module>', 'skills module (registry or skills map); overrides lightsop.config.json')
    .option('--input <text>', 'the value of the implicit $input variable')
    .option('--json', 'print one JSON object: variables, failures and commands')
    .option('--record <file>', 'write a run record (JSON Lines, docs/run-records.md) as the run goes: replay it with lightsop replay')
    .option('--timeout <duration>', 'abort the run after this long (30, 30s, 500ms, 2m)', durationOption())
    .option('--grace <duration>', `after --timeout or Ctrl-C, how long running commands get to stop before they are reported canceled (default ${formatSeconds(DEFAULT_GRACE_MS)})`, durationOption({ allowZero: true }))
    .option('--concurrency <n>', 'run at most this many commands at once', (v) => {
      const n = nonNegativeInt(v);
      if (n === 0) throw new InvalidArgumentError('expected a positive integer');
      return n;
    });
  addLlmOptions(run, 'OpenAI-compatible endpoint for #!english plans', 'model for #!english plans')
    .option('--redis <url>', 'run each command on the workers of a Redis queue (lightsop worker), e.g. redis://127.0.0.1:6379')
    .option('--queue <name>', 'with --redis: the queue (default "lightsop")')
    .option('--reconnect-timeout <duration>', 'with --redis: how long Redis may be unreachable before the run fails (default 30s)', durationOption())
    .action(async (plan: string, opts) => {
      const { runCommand } = await import('./commands/run');
      result.code = await runCommand(plan, opts, io, signals);
    });

  program
    .command('replay')
    .description('run a recorded plan again with every command and model call answered from its record (offline)')
    .argument('<record>', 'a run record written by lightsop run --record')
    .option('--plan <plan>', 'replay this (edited) plan instead of the recorded one; calls the record cannot answer are listed')
    .option('--input <text>', 'the value of $input (default: the recorded input)')
    .option('--json', 'print one JSON object: variables, failures and commands (as lightsop run)')
    .option('--timeout <duration>', 'abort the replay after this long', durationOption())
    .option('--grace <duration>', 'after --timeout or Ctrl-C, how long running commands get to stop', durationOption({ allowZero: true }))
    .option('--concurrency <n>', 'run at most this many commands at once', positiveInt)
    .addHelpText('after', '\nExit codes: as lightsop run (0 every variable success, 1 otherwise or a call the record could not answer, 2 invalid plan, 3 usage or I/O error).')
    .action(async (record: string, opts) => {
      const { replayCommand } = await import('./commands/replay');
      result.code = await replayCommand(record, opts, io, signals);
    });

  program
    .command('diff')
    .description('compare two run records: status and value changes per declaration, new and removed declarations, timing')
    .argument('<a>', 'the first run record')
    .argument('<b>', 'the second run record')
    .option('--json', 'print one JSON object')
    .option('--timing-threshold <ms>', 'show a duration change of at least this many milliseconds (and 50 %) (default 50)', nonNegativeInt)
    .addHelpText('after', '\nExit codes: 0 no status or value changes, 1 changes, 2 usage or I/O error.')
    .action(async (a: string, b: string, opts) => {
      const { diffCommand } = await import('./commands/diff');
      result.code = diffCommand(a, b, opts, io);
    });

  program
    .command('test')
    .description('run plan tests: NAME.sop.test.json files next to plans (mocks, records, expectations)')
    .argument('[paths...]', 'test files, plans (their NAME.sop.test.json) or folders to search (default: the current folder)')
    .addOption(new Option('-r, --reporter <reporter>', 'output format').choices(['text', 'json', 'junit']).default('text'))
    .option('--skills <module>', 'skills module for tests with "skills": true; overrides lightsop.config.json')
    .option('--timeout <duration>', 'per test (default 30s)', durationOption())
    .option('--pass-with-no-tests', 'exit 0 when no test file is found (default: exit 2)')
    .addHelpText('after', '\nExit codes: 0 every test passed, 1 some test failed, 2 usage or I/O error or an invalid test file. Format: docs/plan-tests.md.')
    .action(async (paths: string[], opts) => {
      const { testCommand } = await import('./commands/test');
      result.code = await testCommand(paths, opts, io);
    });

  program
    .command('worker')
    .description('run the jobs of a Redis queue with a skills module (commands for run --redis, whole plans for batch)')
    .requiredOption('--redis <url>', 'Redis URL, e.g. redis://127.0.0.1:6379 (password: LIGHTSOP_REDIS_PASSWORD)')
    .option('--skills <module>', 'skills module (registry or skills map); overrides lightsop.config.json')
    .option('--config <file>', 'the lightsop.config.json whose skills and mcpServers this worker hosts (default: the nearest one above the current folder)')
    .option('--concurrency <n>', 'jobs run at once by this process (default 1)', positiveInt)
    .option('--queue <name>', 'the queue (default "lightsop")')
    .option('--stall-timeout <duration>', 'a job whose worker stops renewing its lock this long goes to another worker (default 30s)', durationOption())
    .option('--shutdown-timeout <duration>', 'on SIGTERM, how long running jobs may finish before they are returned to the queue (default 30s)', durationOption())
    .option('--health-interval <duration>', 'period of the health line in the log (default 30s)', durationOption())
    .action(async (opts) => {
      const { workerCommand } = await import('./commands/worker');
      result.code = await workerCommand(opts, io, workerHost);
    });

  program
    .command('batch')
    .description('run a plan once per line of a JSON Lines file on the workers of a Redis queue')
    .argument('<plan>', 'the plan file')
    .requiredOption('--inputs <file>', 'JSON Lines: one input per line (a JSON string is the input text; other JSON is passed as its JSON text)')
    .requiredOption('--redis <url>', 'Redis URL, e.g. redis://127.0.0.1:6379 (password: LIGHTSOP_REDIS_PASSWORD)')
    .requiredOption('--out <file>', 'results, one JSON line per input; a rerun skips the inputs that have one')
    .option('--queue <name>', 'the queue (default "lightsop")')
    .option('--timeout <duration>', 'stop each input\'s run after this long', durationOption())
    .option('--max-pending <n>', 'most inputs queued in Redis at once (default 2000)', positiveInt)
    .option('--reconnect-timeout <duration>', 'how long Redis may be unreachable before the batch stops (default 30s)', durationOption())
    .option('--progress-interval <duration>', 'period of the progress line when stderr is not a terminal (default 5s)', durationOption())
    .action(async (plan: string, opts) => {
      const { batchCommand } = await import('./commands/batch');
      result.code = await batchCommand(plan, opts, io, batchHost);
    });

  program
    .command('mcp')
    .description('serve this workspace\'s plans to coding agents as an MCP server: lint_plan, format_plan, plan_graph, list_commands, run_plan (stdio; --http for Streamable HTTP)')
    .option('--http <port>', 'serve Streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio (0 picks a free port)', (v) => {
      const n = nonNegativeInt(v);
      if (n > 65535) throw new InvalidArgumentError('expected a port number (0-65535)');
      return n;
    })
    .option('--root <dir>', 'the workspace folder: its lightsop.config.json, skills and plans (default: the current folder)')
    .option('--skills <module>', 'skills module (registry or skills map) or JSON description; overrides lightsop.config.json')
    .option('--timeout <duration>', 'the longest a run_plan may take (default 5m)', durationOption())
    .option('--grace <duration>', `after a run's timeout or cancellation, how long running commands get to stop (default ${formatSeconds(DEFAULT_GRACE_MS)})`, durationOption({ allowZero: true }))
    .option('--no-run', 'leave out run_plan: only check, format, graph and describe plans')
    .action(async (opts) => {
      const { mcpCommand } = await import('./mcp-server/index');
      result.code = await mcpCommand(opts, io, mcpHost);
    });

  const chat = program
    .command('chat')
    .description('an agent session: one prompt per line, planned as a SOP (or a loop with --mode loop), with approvals')
    .option('--skills <module>', 'skills module (registry or skills map); overrides lightsop.config.json')
    .addOption(new Option('--mode <mode>', 'sop: plan first, loop fallback; loop: one tool at a time').choices(['sop', 'loop']).default('sop'))
    .option('--json', 'print one JSON object per line (plan, variable, tool, approval and answer events)')
    .option('--approve-all', 'approve every call without asking (needed for side effects when standard input is not a terminal)')
    .option('--no-stdlib', 'leave out the standard skills (read_file, list_files, write_file, edit_file, run_shell, fetch_url)')
    .option('--root <dir>', 'workspace root for the file skills (default: the current folder)')
    .option('--max-plan-attempts <n>', 'plan generations per prompt (default 3)', (v) => {
      const n = nonNegativeInt(v);
      if (n === 0) throw new InvalidArgumentError('expected a positive integer');
      return n;
    });
  addLlmOptions(chat, 'OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1', 'model name')
    .action(async (opts) => {
      const { chatCommand } = await import('./commands/chat');
      result.code = await chatCommand(opts, io, chatHost);
    });

  return program;
}

const chatHost = {
  get input() {
    return process.stdin;
  },
  get interactive() {
    return Boolean(process.stdin.isTTY);
  },
  get terminal() {
    return Boolean(process.stdin.isTTY && process.stdout.isTTY);
  },
  get output() {
    return process.stdout;
  },
  get env() {
    return process.env;
  },
  onInterrupt(handler: () => void) {
    process.on('SIGINT', handler);
    return () => void process.off('SIGINT', handler);
  },
  exit(code: number) {
    process.exit(code);
  },
};

const workerHost = {
  onStop(handler: (signal: string) => void) {
    process.on('SIGTERM', () => handler('SIGTERM'));
    process.on('SIGINT', () => handler('SIGINT'));
  },
  exit(code: number) {
    process.exit(code);
  },
};

const mcpHost = {
  onStop(handler: () => void) {
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
    return () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    };
  },
};

const batchHost = {
  get stderrIsTTY() {
    return Boolean(process.stderr.isTTY);
  },
  get stderrColumns() {
    return process.stderr.columns || 80;
  },
  onInterrupt(handler: () => void) {
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
    return () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    };
  },
  exit(code: number) {
    process.exit(code);
  },
};

const signals: ProcessSignals = {
  onInterrupt(handler) {
    process.on('SIGINT', handler);
    return () => process.off('SIGINT', handler);
  },
};

/** Runs the CLI with `argv` (without the node and script entries); returns the exit code. */
export async function runCli(argv: readonly string[], rawIo: Io = processIo(usageExitCode(argv[0]))): Promise<number> {
  // The output edge: no write shows an API key of the environment or credentials in a URL.
  rememberEnvironmentSecrets(process.env);
  const io = guardIo(rawIo);
  const result = { code: 0 };
  const program = buildProgram(io, result);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return result.code;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? 0 : usageExitCode(argv[0]);
    }
    if (error instanceof CliError) {
      io.stderr(`lightsop: ${terminalText(error.message)}\n`);
      return error.exitCode;
    }
    // Whatever was thrown (a skills module can throw anything) is described without trusting it.
    const { errorText } = await import('@lightsop/runtime');
    let stack = '';
    try {
      stack = String((error as Error)?.stack ?? '');
    } catch {
      // An unreadable stack is left out.
    }
    io.stderr(`lightsop: internal error: ${terminalText(errorText(error))}${process.env.LIGHTSOP_DEBUG ? `\n${terminalText(stack, { multiline: true })}` : ' (set LIGHTSOP_DEBUG=1 for details)'}\n`);
    return usageExitCode(argv[0]);
  } finally {
    // MCP servers the command started stop with it (stdio servers are child processes).
    await closeMcpServers();
  }
}

const isEntry = typeof process !== 'undefined' && process.argv[1] !== undefined && /lightsop(\.js)?$|main\.(js|ts)$/.test(process.argv[1]);
if (isEntry) {
  const argv = process.argv.slice(2);
  runCli(argv)
    .then((code) => {
      const exitCode = outputFailureExit() ?? code;
      process.exitCode = exitCode;
      // Work the CLI gave up waiting for (a command ignoring its signal, a module still loading)
      // would keep the process alive: exit once the output is out.
      if (workLeftBehind()) exitAfterOutput(exitCode);
    })
    .catch((error: unknown) => {
      // runCli reports what fails inside it; this is what failed before its output was set up
      // (the current directory deleted): one line and the contract's exit code, never an
      // unhandled rejection with a stack.
      reportEntryFailure(error, usageExitCode(argv[0]));
    });
}

/** Reports a failure of the CLI's entry on standard error and sets the exit code. Never throws. */
/** Describes whatever was thrown without trusting it (the runtime's errorText is not loaded here). */
function entryErrorText(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message);
  } catch {
    // A Proxy or a throwing getter: describe the value itself.
  }
  try {
    return String(error);
  } catch {
    return 'a value that cannot be described';
  }
}

function reportEntryFailure(error: unknown, fallbackExit: number): void {
  const known = error instanceof CliError;
  process.exitCode = known ? error.exitCode : fallbackExit;
  try {
    const text = known ? error.message : `internal error: ${entryErrorText(error)} (set LIGHTSOP_DEBUG=1 for details)`;
    process.stderr.write(`lightsop: ${terminalText(text)}\n`);
    if (!known && process.env.LIGHTSOP_DEBUG) process.stderr.write(`${terminalText(String((error as Error)?.stack ?? ''), { multiline: true })}\n`);
  } catch {
    // Standard error itself is gone: the exit code is all that is left to say.
  }
}
