/**
 * `lightsop test [paths]` (docs/plan-tests.md): runs the tests in `NAME.sop.test.json` files next
 * to plans. Each test runs the plan in a fresh Interpreter whose commands are answered by the
 * test's mocks, then by a run record, then (when the test allows it) by the real skills; anything
 * else fails the call and the test. Expectations and failures are checked, and every problem is
 * reported at its place in the test file (file:line:column). Reporters: text, json, junit.
 * Exit 0 every test passed, 1 some test failed, 2 usage or I/O error or an invalid test file.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020';
import { findNodeAtLocation, parseTree, type Node as JsonNode, type ParseError, printParseErrorCode } from 'jsonc-parser';
import { globSync } from 'tinyglobby';
import { analyzePlan, isEnglishSource } from '@lightsop/core';
import {
  Interpreter, RunRecordError, UnlimitedExecutionMonitor, dataText, errorText, parseRunRecord, replayFromRecord, textOf,
  type CommandRegistry, type LlmAgent, type RunRecord,
} from '@lightsop/runtime';
import schema from '../../../../schemas/plan-test.schema.json';
import { CliError } from '../errors';
import { writeJunit } from '../formats/junit';
import type { Io } from '../io';
import { loadSkills, skillsPathFor } from '../skills';
import { jsonLine, oneLine, terminalText } from '../terminal-text';

/** A value in a message: quoted, on one line, at most 200 characters. */
function quoted(text: string): string {
  return `"${oneLine(text, 200)}"`;
}

const USAGE = 2;
export const TEST_FILE_SUFFIX = '.sop.test.json';

export interface TestOptions {
  readonly reporter?: 'text' | 'json' | 'junit';
  readonly skills?: string;
  /** Per test, in milliseconds (default 30 s). */
  readonly timeout?: number;
  /** Finding no test file is a pass (exit 0), not a usage error. */
  readonly passWithNoTests?: boolean;
}

/** A problem at a place: the test file's (an expectation) or the plan's (a diagnostic). */
export interface TestProblem {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
  readonly variable?: string;
  readonly expected?: string;
  readonly actual?: string;
}

export interface TestCaseResult {
  readonly name: string;
  /** passed; failed: an expectation did not hold; error: the test could not run as written. */
  readonly status: 'passed' | 'failed' | 'error';
  readonly durationMs: number;
  readonly line: number;
  readonly column: number;
  readonly problems: readonly TestProblem[];
}

export interface TestFileResult {
  readonly file: string;
  readonly plan: string;
  readonly durationMs: number;
  readonly tests: readonly TestCaseResult[];
}

type Matcher = string | { pattern: string };
interface MockSpec { command: string; variable?: string; args?: Matcher[]; value?: unknown; fail?: string; cancel?: string }
interface Expectation { status?: string; value?: string; pattern?: string }
interface FailureSpec { variable: string; reason?: string; pattern?: string }
interface TestSpec {
  name: string; input?: string; mocks?: MockSpec[]; record?: string; skills?: boolean;
  expect?: Record<string, string | Expectation>; failures?: FailureSpec[];
}
interface TestFile { plan?: string; tests: TestSpec[] }

let validator: ReturnType<Ajv2020['compile']> | null = null;
function validate(data: unknown): ErrorObject[] {
  validator ??= new Ajv2020({ allErrors: true, strict: false }).compile(schema);
  return validator(data) ? [] : [...(validator.errors ?? [])];
}

/** 1-based line and column of an offset. */
export class Positions {
  private readonly starts: number[] = [0];
  constructor(text: string) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.starts.push(i + 1);
  }
  at(offset: number): { line: number; column: number } {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - this.starts[lo]! + 1 };
  }
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
  const shown = path.relative(io.cwd, absolute) || absolute;
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    throw new CliError(`${shown}: ${(error as NodeJS.ErrnoException).code === 'EISDIR' ? 'is a folder' : (error as Error).message}`, USAGE);
  }
  const positions = new Positions(text);
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: false, disallowComments: true });
  if (errors.length > 0 || !tree) {
    const first = errors[0];
    const at = positions.at(first?.offset ?? 0);
    throw new CliError(`${shown}:${at.line}:${at.column}: not valid JSON: ${first ? printParseErrorCode(first.error) : 'empty file'}`, USAGE);
  }
  const data = JSON.parse(text) as unknown;
  const problems = validate(data);
  if (problems.length > 0) {
    // One line per place: alternatives (a string or an object) are said once, as their types.
    const byPath = new Map<string, ErrorObject[]>();
    for (const p of problems) {
      const list = byPath.get(p.instancePath) ?? [];
      list.push(p);
      byPath.set(p.instancePath, list);
    }
    let shownLines = 0;
    for (const [pointer, list] of byPath) {
      if (shownLines++ >= 10) break;
      const node = nodeAt(tree, pointer);
      const at = positions.at(node?.offset ?? 0);
      const field = pointer === '' ? 'the file' : pointer.slice(1).split('/').join('.');
      const types = list.filter((p) => p.keyword === 'type').map((p) => String(p.params.type));
      const first = list.find((p) => p.keyword !== 'oneOf' && p.keyword !== 'type') ?? list[0]!;
      const message = list.some((p) => p.keyword === 'oneOf') && types.length > 1 ? `must be ${types.join(' or ')}` : `${first.message ?? 'is invalid'}${'additionalProperty' in first.params ? ` ("${String(first.params.additionalProperty)}")` : ''}`;
      io.stderr(`${terminalText(shown)}:${at.line}:${at.column}: ${terminalText(field)} ${terminalText(message)}\n`);
    }
    throw new CliError(`${shown}: not a valid test file (schemas/plan-test.schema.json)`, USAGE);
  }
  const spec = data as TestFile;
  const dir = path.dirname(absolute);
  const planPath = path.resolve(dir, spec.plan ?? path.basename(absolute).slice(0, -'.test.json'.length));
  const planShown = path.relative(io.cwd, planPath) || planPath;
  let planText: string;
  try {
    planText = readFileSync(planPath, 'utf8').replace(/^\uFEFF/, '');
  } catch {
    const node = tree && findNodeAtLocation(tree, ['plan']);
    const at = positions.at(node?.offset ?? 0);
    throw new CliError(`${shown}:${at.line}:${at.column}: cannot read the plan ${planShown}`, USAGE);
  }
  const started = performance.now();
  const tests: TestCaseResult[] = [];
  for (let i = 0; i < spec.tests.length; i++) {
    tests.push(await runOne(spec.tests[i]!, i, { shown, dir, tree, positions, planText, planShown, planDir: path.dirname(planPath) }, options, io));
  }
  return { file: shown, plan: planShown, durationMs: round(performance.now() - started), tests };
}

interface FileContext {
  shown: string;
  dir: string;
  tree: JsonNode;
  positions: Positions;
  planText: string;
  planShown: string;
  planDir: string;
}

function nodeAt(tree: JsonNode, pointer: string): JsonNode | undefined {
  const segments = pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const pathParts = segments.map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  for (let n = pathParts.length; n >= 0; n--) {
    const node = findNodeAtLocation(tree, pathParts.slice(0, n));
    if (node) return node.parent?.type === 'property' ? node.parent : node;
  }
  return undefined;
}

function textMatches(matcher: Matcher, text: string): boolean {
  return typeof matcher === 'string' ? matcher === text : new RegExp(matcher.pattern).test(text);
}

async function runOne(test: TestSpec, index: number, ctx: FileContext, options: TestOptions, io: Io): Promise<TestCaseResult> {
  const started = performance.now();
  const where = (location: readonly (string | number)[] = []) => {
    const node = nodeAt(ctx.tree, '/' + ['tests', index].concat(location).map(String).join('/'));
    return ctx.positions.at(node?.offset ?? 0);
  };
  const head = where();
  const problems: TestProblem[] = [];
  const problem = (location: (string | number)[], message: string, extra: Partial<TestProblem> = {}) => {
    const at = where(location);
    problems.push({ file: ctx.shown, line: at.line, column: at.column, message, ...extra });
  };
  const done = (status: TestCaseResult['status']): TestCaseResult => ({
    name: test.name, status, durationMs: round(performance.now() - started), line: head.line, column: head.column, problems,
  });

  // Patterns are checked before anything runs: a bad one is the test's error, at its place.
  const badPattern = (p: string, location: (string | number)[]) => {
    try {
      new RegExp(p);
      return false;
    } catch (error) {
      problem(location, `invalid pattern: ${(error as Error).message}`);
      return true;
    }
  };
  let bad = false;
  (test.mocks ?? []).forEach((m, i) => (m.args ?? []).forEach((a, j) => {
    if (typeof a !== 'string') bad = badPattern(a.pattern, ['mocks', i, 'args', j]) || bad;
  }));
  for (const [name, e] of Object.entries(test.expect ?? {})) if (typeof e !== 'string' && e.pattern !== undefined) bad = badPattern(e.pattern, ['expect', name, 'pattern']) || bad;
  (test.failures ?? []).forEach((f, i) => {
    if (f.pattern !== undefined) bad = badPattern(f.pattern, ['failures', i, 'pattern']) || bad;
  });
  if (bad) return done('error');

  const english = isEnglishSource(ctx.planText);
  const input = test.input;
  if (!english) {
    const analysis = analyzePlan(ctx.planText, { inputDeclared: input !== undefined });
    const errors = analysis.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) {
      for (const d of errors) problems.push({ file: ctx.planShown, line: d.range.line, column: d.range.column, message: `${d.message} [${d.code}]` });
      return done('error');
    }
  }

  let record: RunRecord | null = null;
  if (test.record !== undefined) {
    const recordPath = path.resolve(ctx.dir, test.record);
    try {
      record = parseRunRecord(readFileSync(recordPath, 'utf8'));
    } catch (error) {
      problem(['record'], `cannot use the record ${test.record}: ${error instanceof RunRecordError ? `line ${error.line}: ${error.message}` : (error as Error).message}`);
      return done('error');
    }
  }
  const replay = record ? replayFromRecord(record) : null;
  let skills: CommandRegistry | null = null;
  if (test.skills) {
    const skillsPath = skillsPathFor(options.skills, ctx.planDir, io.cwd);
    if (!skillsPath) {
      problem(['skills'], 'no skills module: give --skills or name one in lightsop.config.json');
      return done('error');
    }
    const loaded = await loadSkills(skillsPath, USAGE, io.cwd);
    if (!loaded.registry) throw new CliError(`${path.relative(io.cwd, skillsPath)}: "skills": true needs a skills module (.mjs or .js), not a JSON description`, USAGE);
    skills = loaded.registry;
  }
  let llmAgent: LlmAgent | null = null;
  if (english) {
    if (!replay) {
      problem([], 'an #!english plan needs "record": a run record that answers its model calls (tests never call a model)');
      return done('error');
    }
    llmAgent = replay.llmAgent;
  }

  const unanswered: string[] = [];
  const registry: CommandRegistry = {
    listCommands: () => {
      const listed: unknown[] = [];
      const seen = new Set<string>();
      const add = (list: unknown) => {
        if (!Array.isArray(list)) return;
        for (const c of list) {
          const name = typeof c === 'string' ? c : (c as { name?: unknown })?.name;
          if (typeof name === 'string' && !seen.has(name)) {
            seen.add(name);
            listed.push(c);
          }
        }
      };
      add(replay?.registry.listCommands());
      add(skills?.listCommands());
      add((test.mocks ?? []).map((m) => ({ name: m.command, description: 'mocked' })));
      return listed;
    },
    executeCommand(payload, responder) {
      const texts = payload.args.map((a) => (a === null || a === undefined ? '' : textOf(a)));
      const mock = (test.mocks ?? []).find((m) => m.command === payload.command
        && (m.variable === undefined || m.variable === payload.variable)
        && (m.args === undefined || (m.args.length === texts.length && m.args.every((matcher, i) => textMatches(matcher, texts[i]!)))));
      if (mock) {
        if (mock.fail !== undefined) return responder.fail(mock.fail);
        if (mock.cancel !== undefined) return responder.cancel(mock.cancel);
        return responder.success(mock.value);
      }
      if (replay) {
        const before = replay.misses.length;
        const answer = replay.registry.executeCommand(payload, responder);
        if (replay.misses.length === before) return answer;
        replay.misses.length = before;
      }
      if (skills) return skills.executeCommand(payload, responder);
      unanswered.push(`@${payload.variable}: ${oneLine(payload.raw, 120)}`);
      return responder.fail(`no mock answers this call: ${payload.raw}`);
    },
  };

  const controller = new AbortController();
  const interpreter = new Interpreter({ registry, input, executionMonitor: new UnlimitedExecutionMonitor(), llmAgent, signal: controller.signal });
  const limit = options.timeout ?? 30_000;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('timeout'));
    interpreter.abandonRunning('canceled', `the test took longer than ${limit} ms`);
  }, limit);
  try {
    await interpreter.updateCode(ctx.planText);
  } catch (error) {
    problem([], `the plan did not run: ${errorText(error)}`);
    return done('error');
  } finally {
    clearTimeout(timer);
  }
  if (timedOut) problem([], `the test took longer than ${limit} ms (--timeout)`);
  for (const call of unanswered) problem(['mocks'], `no mock${replay ? ', record' : ''}${skills ? ' or skill' : ''} answers ${call}`);
  if (replay) for (const miss of replay.misses) problem(['record'], `the record cannot answer ${miss.kind === 'model' ? 'a model call' : `@${miss.variable}`}: ${miss.reason}`);

  const values = new Map<string, { status: string; text: string }>();
  for (const e of interpreter.entries()) if (e.declaration !== null || e.name === 'input') values.set(e.name, { status: e.value.status, text: dataText(e.value) });
  for (const [name, raw] of Object.entries(test.expect ?? {})) {
    const e: Expectation = typeof raw === 'string' ? { status: 'success', value: raw } : raw;
    const actual = values.get(name);
    const location = ['expect', name];
    if (!actual) {
      problem(location, `@${name} is not declared in ${ctx.planShown}`, { variable: name });
      continue;
    }
    if (e.status !== undefined && actual.status !== e.status) {
      problem(location, `@${name}: expected status ${e.status}, got ${actual.status} (${oneLine(actual.text, 200)})`, { variable: name, expected: e.status, actual: actual.status });
      continue;
    }
    if (e.value !== undefined && actual.text !== e.value) {
      problem(typeof raw === 'string' ? location : [...location, 'value'], `@${name}: expected value ${quoted(e.value)}, got ${quoted(actual.text)}`, { variable: name, expected: e.value, actual: actual.text });
    }
    if (e.pattern !== undefined && !new RegExp(e.pattern).test(actual.text)) {
      problem([...location, 'pattern'], `@${name}: expected a value matching /${e.pattern}/, got ${quoted(actual.text)}`, { variable: name, expected: `/${e.pattern}/`, actual: actual.text });
    }
  }
  if (test.failures !== undefined) {
    const failed = [...values].filter(([, v]) => v.status === 'fail');
    const expected = new Set(test.failures.map((f) => f.variable));
    test.failures.forEach((f, i) => {
      const actual = values.get(f.variable);
      if (!actual || actual.status !== 'fail') {
        problem(['failures', i], `@${f.variable}: expected to fail, got ${actual ? actual.status : 'no such variable'}`, { variable: f.variable, expected: 'fail', actual: actual?.status ?? 'none' });
        return;
      }
      if (f.reason !== undefined && actual.text !== f.reason) problem(['failures', i, 'reason'], `@${f.variable}: expected reason ${JSON.stringify(f.reason)}, got ${quoted(actual.text)}`, { variable: f.variable, expected: f.reason, actual: actual.text });
      if (f.pattern !== undefined && !new RegExp(f.pattern).test(actual.text)) problem(['failures', i, 'pattern'], `@${f.variable}: expected a reason matching /${f.pattern}/, got ${quoted(actual.text)}`, { variable: f.variable, expected: `/${f.pattern}/`, actual: actual.text });
    });
    for (const [name, v] of failed) {
      if (!expected.has(name)) problem(['failures'], `@${name} failed and the test does not expect it: ${oneLine(v.text, 200)}`, { variable: name, expected: 'not fail', actual: v.text });
    }
  }
  return done(problems.length > 0 ? (unanswered.length > 0 || timedOut ? 'error' : 'failed') : 'passed');
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

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
