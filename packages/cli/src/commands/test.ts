/**
 * `lightsop test [paths]` (docs/plan-tests.md): runs the tests in `NAME.sop.test.json` files next
 * to plans, with the shared runner (`../plan-tests/runner.ts`, which the VS Code Test Explorer runs
 * too): each test runs the plan in a fresh Interpreter whose commands are answered by the test's
 * mocks, then by a run record, then (when the test allows it) by the real skills. Every problem is
 * reported at its place in the test file (file:line:column). Reporters: text, json, junit.
 * Exit 0 every test passed, 1 some test failed, 2 usage or I/O error or an invalid test file.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { globSync } from 'tinyglobby';
import { CliError } from '../errors';
import { writeJunit } from '../formats/junit';
import type { Io } from '../io';
import {
  TEST_FILE_SUFFIX, TestFileError, runTestFile as runShared, type PlanTestHost, type TestCaseResult, type TestFileResult,
} from '../plan-tests/runner';
import { loadSkills, skillsPathFor } from '../skills';
import { jsonLine, terminalText } from '../terminal-text';

export { TEST_FILE_SUFFIX, type TestCaseResult, type TestFileResult, type TestProblem } from '../plan-tests/runner';

const USAGE = 2;

export interface TestOptions {
  readonly reporter?: 'text' | 'json' | 'junit';
  readonly skills?: string;
  /** Per test, in milliseconds (default 30 s). */
  readonly timeout?: number;
  /** Finding no test file is a pass (exit 0), not a usage error. */
  readonly passWithNoTests?: boolean;
}

/** The test files that `paths` name: files, plans (their NAME.sop.test.json), folders (searched). */
export function testFilesFor(paths: readonly string[], cwd: string, allowNone = false): string[] {
  const out = new Set<string>();
  const search = (dir: string) => {
    for (const f of globSync([`**/*${TEST_FILE_SUFFIX}`], { cwd: dir, absolute: true, ignore: ['**/node_modules/**', '**/.git/**'] }).sort()) out.add(path.resolve(f));
  };
  if (paths.length === 0) search(cwd);
  for (const p of paths) {
    const absolute = path.resolve(cwd, p);
    let stat;
    try {
      stat = statSync(absolute);
    } catch {
      throw new CliError(`${p}: no such file or directory`, USAGE);
    }
    if (stat.isDirectory()) search(absolute);
    else if (absolute.endsWith('.sop')) {
      const next = `${absolute}.test.json`;
      if (!existsSync(next)) throw new CliError(`${p}: no test file next to it (${path.basename(next)})`, USAGE);
      out.add(next);
    } else out.add(absolute);
  }
  if (out.size === 0 && !allowNone) throw new CliError(`no test files (*${TEST_FILE_SUFFIX}) found${paths.length ? ` in ${paths.join(', ')}` : ''}`, USAGE);
  return [...out];
}

export async function testCommand(paths: readonly string[], options: TestOptions, io: Io): Promise<number> {
  const files = testFilesFor(paths, io.cwd, options.passWithNoTests === true);
  if (files.length === 0) io.stderr(`lightsop: no test files (*${TEST_FILE_SUFFIX}) found; nothing to test\n`);
  const results: TestFileResult[] = [];
  for (const file of files) results.push(await runTestFile(file, options, io));
  const reporter = options.reporter ?? 'text';
  if (reporter === 'json') io.stdout(jsonLine(results) + '\n');
  else if (reporter === 'junit') io.stdout(writeJunit(results));
  else io.stdout(textReport(results));
  return results.some((f) => f.tests.some((t) => t.status !== 'passed')) ? 1 : 0;
}

/** Reads, checks and runs one test file. An unreadable or invalid file is a usage error (exit 2). */
export async function runTestFile(absolute: string, options: TestOptions, io: Io): Promise<TestFileResult> {
  const host: PlanTestHost = {
    cwd: io.cwd,
    async skills(planDir) {
      const skillsPath = skillsPathFor(options.skills, planDir, io.cwd);
      if (!skillsPath) return { problem: 'no skills module: give --skills or name one in lightsop.config.json' };
      const loaded = await loadSkills(skillsPath, USAGE, io.cwd);
      if (!loaded.registry) throw new CliError(`${path.relative(io.cwd, skillsPath)}: "skills": true needs a skills module (.mjs or .js), not a JSON description`, USAGE);
      return loaded.registry;
    },
  };
  try {
    return await runShared(absolute, host, { timeout: options.timeout });
  } catch (error) {
    if (!(error instanceof TestFileError)) throw error;
    for (const line of error.details) io.stderr(`${terminalText(line)}\n`);
    throw new CliError(error.message, USAGE);
  }
}

function textReport(results: readonly TestFileResult[]): string {
  const out: string[] = [];
  let passed = 0;
  let failed = 0;
  const mark = (s: TestCaseResult['status']) => (s === 'passed' ? '✓' : '✗');
  for (const file of results) {
    out.push(`${terminalText(file.file)} (${terminalText(file.plan)})`);
    for (const t of file.tests) {
      if (t.status === 'passed') passed++;
      else failed++;
      out.push(`  ${mark(t.status)} ${terminalText(t.name)}${t.status === 'error' ? ' (error)' : ''} (${Math.round(t.durationMs)} ms)`);
      for (const p of t.problems) out.push(`    ${terminalText(p.file)}:${p.line}:${p.column}: ${terminalText(p.message)}`);
    }
  }
  out.push('', `${passed + failed} test${passed + failed === 1 ? '' : 's'}: ${passed} passed, ${failed} failed`);
  return out.join('\n') + '\n';
}

