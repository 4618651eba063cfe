/**
 * The plan test runner (docs/plan-tests.md), shared by `lightsop test` and the VS Code Test
 * Explorer: nothing here prints, exits or knows a terminal or an editor. A host gives the working
 * folder (paths are shown relative to it) and the skills for tests with `"skills": true`.
 *
 * `readTestFile` reads and checks a `NAME.sop.test.json` (JSON, then the schema) and places each
 * test; `prepareTest` builds what one test runs with (the plan text, the input, a registry that
 * answers from the mocks, the record, then the skills, and the record's model) and the `check` of
 * its expectations against the variables a run ended with; `runTest` runs it in a fresh
 * Interpreter. The debugger runs a prepared test itself and calls `check` when it ends.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020';
import { findNodeAtLocation, parseTree, type Node as JsonNode, type ParseError, printParseErrorCode } from 'jsonc-parser';
import { analyzePlan, isEnglishSource, type Analysis } from '@lightsop/core';
import {
  Interpreter, RunRecordError, UnlimitedExecutionMonitor, dataText, errorText, parseRunRecord, replayFromRecord, textOf,
  type CommandRegistry, type LlmAgent, type RunRecord,
} from '@lightsop/runtime';
import schema from '../../../../schemas/plan-test.schema.json';
import { oneLine } from '../terminal-text';

export const TEST_FILE_SUFFIX = '.sop.test.json';

/** A value in a message: quoted, on one line, at most 200 characters. */
function quoted(text: string): string {
  return `"${oneLine(text, 200)}"`;
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

/** What the runner needs from its host. */
export interface PlanTestHost {
  /** Paths in results and messages are shown relative to this folder. */
  readonly cwd: string;
  /**
   * The skills of a test with `"skills": true`, for a plan in `planDir`: a registry, or the problem
   * that makes the test an error (reported at its "skills"). Throw to stop the whole run.
   */
  skills(planDir: string): Promise<CommandRegistry | { readonly problem: string }>;
}

/** A test file that cannot be used: `message` is one line with file:line:column, `details` the lines before it. */
export class TestFileError extends Error {
  constructor(message: string, readonly details: readonly string[] = []) {
    super(message);
    this.name = 'TestFileError';
  }
}

type Matcher = string | { pattern: string };
interface MockSpec { command: string; variable?: string; args?: Matcher[]; value?: unknown; fail?: string; cancel?: string }
interface Expectation { status?: string; value?: string; pattern?: string }
interface FailureSpec { variable: string; reason?: string; pattern?: string }
export interface TestSpec {
  name: string; input?: string; mocks?: MockSpec[]; record?: string; skills?: boolean;
  expect?: Record<string, string | Expectation>; failures?: FailureSpec[];
}
interface TestFileSpec { plan?: string; tests: TestSpec[] }

/** One test of a file, as an editor lists it. */
export interface TestCaseInfo {
  readonly index: number;
  readonly name: string;
  /** 1-based place of the test's object in the test file. */
  readonly line: number;
  readonly column: number;
  /** True when the test may run the real skills module (`"skills": true`): workspace code. */
  readonly usesSkills: boolean;
}

/** A read and checked test file. */
export interface TestFile {
  readonly absolute: string;
  /** The file as shown in results (relative to the host's folder). */
  readonly shown: string;
  readonly planPath: string;
  readonly planShown: string;
  readonly tests: readonly TestCaseInfo[];
  /** @internal */
  readonly spec: TestFileSpec;
  /** @internal */
  readonly tree: JsonNode;
  /** @internal */
  readonly positions: Positions;
}

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

function nodeAt(tree: JsonNode, pointer: string): JsonNode | undefined {
  const segments = pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const pathParts = segments.map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  for (let n = pathParts.length; n >= 0; n--) {
    const node = findNodeAtLocation(tree, pathParts.slice(0, n));
    if (node) return node.parent?.type === 'property' ? node.parent : node;
  }
  return undefined;
}

/** Reads and checks a test file (JSON, then schemas/plan-test.schema.json); the plan is not read. */
export function readTestFile(absolute: string, cwd: string, text?: string): TestFile {
  const shown = path.relative(cwd, absolute) || absolute;
  if (text === undefined) {
    try {
      text = readFileSync(absolute, 'utf8');
    } catch (error) {
      throw new TestFileError(`${shown}: ${(error as NodeJS.ErrnoException).code === 'EISDIR' ? 'is a folder' : (error as Error).message}`);
    }
  }
  const positions = new Positions(text);
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: false, disallowComments: true });
  if (errors.length > 0 || !tree) {
    const first = errors[0];
    const at = positions.at(first?.offset ?? 0);
    throw new TestFileError(`${shown}:${at.line}:${at.column}: not valid JSON: ${first ? printParseErrorCode(first.error) : 'empty file'}`);
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
    const details: string[] = [];
    for (const [pointer, list] of byPath) {
      if (details.length >= 10) break;
      const node = nodeAt(tree, pointer);
      const at = positions.at(node?.offset ?? 0);
      const field = pointer === '' ? 'the file' : pointer.slice(1).split('/').join('.');
      const types = list.filter((p) => p.keyword === 'type').map((p) => String(p.params.type));
      const first = list.find((p) => p.keyword !== 'oneOf' && p.keyword !== 'type') ?? list[0]!;
      const message = list.some((p) => p.keyword === 'oneOf') && types.length > 1 ? `must be ${types.join(' or ')}` : `${first.message ?? 'is invalid'}${'additionalProperty' in first.params ? ` ("${String(first.params.additionalProperty)}")` : ''}`;
      details.push(`${shown}:${at.line}:${at.column}: ${field} ${message}`);
    }
    throw new TestFileError(`${shown}: not a valid test file (schemas/plan-test.schema.json)`, details);
  }
  const spec = data as TestFileSpec;
  const planPath = path.resolve(path.dirname(absolute), spec.plan ?? path.basename(absolute).slice(0, -'.test.json'.length));
  const tests = spec.tests.map((t, index): TestCaseInfo => {
    const at = positions.at(nodeAt(tree, `/tests/${index}`)?.offset ?? 0);
    return { index, name: t.name, line: at.line, column: at.column, usesSkills: t.skills === true };
  });
  return { absolute, shown, planPath, planShown: path.relative(cwd, planPath) || planPath, tests, spec, tree, positions };
}

/** The plan a test file tests, read as text (a leading BOM dropped). */
export function readTestPlan(file: TestFile): string {
  try {
    return readFileSync(file.planPath, 'utf8').replace(/^\uFEFF/, '');
  } catch {
    const node = findNodeAtLocation(file.tree, ['plan']);
    const at = file.positions.at(node?.offset ?? 0);
    throw new TestFileError(`${file.shown}:${at.line}:${at.column}: cannot read the plan ${file.planShown}`);
  }
}

/** What a test runs with, and how its outcome is judged. */
export interface PreparedTest {
  readonly planText: string;
  /** `undefined`: the plan runs without an input. */
  readonly input: string | undefined;
  /** The plan's analysis (null for `#!english`), for `updateCode` (`UpdateOptions.analysis`). */
  readonly analysis: Analysis | null;
  readonly registry: CommandRegistry;
  readonly llmAgent: LlmAgent | null;
  /**
   * Judges the run: `values` are the variables it ended with (declared ones and `input`, each with
   * its status and public text, as `valuesOf` gives them). `runProblem`: the run itself failed or
   * timed out (the test is then an error).
   */
  check(values: ReadonlyMap<string, VariableOutcome>, runProblem?: string): TestCaseResult;
  /** The test's result when the plan could not run at all: an error with that one problem. */
  error(message: string): TestCaseResult;
}

export interface VariableOutcome {
  readonly status: string;
  readonly text: string;
}

/** The variables an interpreter ended with, as `check` reads them. */
export function valuesOf(interpreter: Interpreter): Map<string, VariableOutcome> {
  const values = new Map<string, VariableOutcome>();
  for (const e of interpreter.entries()) if (e.declaration !== null || e.name === 'input') values.set(e.name, { status: e.value.status, text: dataText(e.value) });
  return values;
}

function textMatches(matcher: Matcher, text: string): boolean {
  return typeof matcher === 'string' ? matcher === text : new RegExp(matcher.pattern).test(text);
}

/**
 * Prepares test `index` of `file` on `planText`: a result (status error) when it cannot run as
 * written (a bad pattern, an invalid plan, an unreadable record, no skills, an #!english plan
 * without a record), else what to run it with.
 */
export async function prepareTest(file: TestFile, index: number, planText: string, host: PlanTestHost): Promise<PreparedTest | TestCaseResult> {
  const test = file.spec.tests[index]!;
  const started = performance.now();
  const dir = path.dirname(file.absolute);
  const where = (location: readonly (string | number)[] = []) => {
    const node = nodeAt(file.tree, '/' + ['tests', index].concat(location).map(String).join('/'));
    return file.positions.at(node?.offset ?? 0);
  };
  const head = where();
  const problems: TestProblem[] = [];
  const problem = (location: (string | number)[], message: string, extra: Partial<TestProblem> = {}) => {
    const at = where(location);
    problems.push({ file: file.shown, line: at.line, column: at.column, message, ...extra });
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

  const english = isEnglishSource(planText);
  const input = test.input;
  const analysis = english ? null : analyzePlan(planText, { inputDeclared: input !== undefined });
  if (analysis) {
    const errors = analysis.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) {
      for (const d of errors) problems.push({ file: file.planShown, line: d.range.line, column: d.range.column, message: `${d.message} [${d.code}]` });
      return done('error');
    }
  }

  let record: RunRecord | null = null;
  if (test.record !== undefined) {
    const recordPath = path.resolve(dir, test.record);
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
    const loaded = await host.skills(path.dirname(file.planPath));
    if ('problem' in loaded) {
      problem(['skills'], loaded.problem);
      return done('error');
    }
    skills = loaded;
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

  const check = (values: ReadonlyMap<string, VariableOutcome>, runProblem?: string): TestCaseResult => {
    if (runProblem !== undefined) problem([], runProblem);
    for (const call of unanswered) problem(['mocks'], `no mock${replay ? ', record' : ''}${skills ? ' or skill' : ''} answers ${call}`);
    if (replay) for (const miss of replay.misses) problem(['record'], `the record cannot answer ${miss.kind === 'model' ? 'a model call' : `@${miss.variable}`}: ${miss.reason}`);
    for (const [name, raw] of Object.entries(test.expect ?? {})) {
      const e: Expectation = typeof raw === 'string' ? { status: 'success', value: raw } : raw;
      const actual = values.get(name);
      const location = ['expect', name];
      if (!actual) {
        problem(location, `@${name} is not declared in ${file.planShown}`, { variable: name });
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
    return done(problems.length > 0 ? (unanswered.length > 0 || runProblem !== undefined ? 'error' : 'failed') : 'passed');
  };
  const error = (message: string): TestCaseResult => {
    problem([], message);
    return done('error');
  };
  return { planText, input, analysis, registry, llmAgent, check, error };
}

export interface RunTestOptions {
  /** Per test, in milliseconds (default 30 s). */
  readonly timeout?: number;
  /** Stops the test (a cancelled test run). */
  readonly signal?: AbortSignal;
}

/** Runs test `index` of `file` in a fresh Interpreter. */
export async function runTest(file: TestFile, index: number, planText: string, host: PlanTestHost, options: RunTestOptions = {}): Promise<TestCaseResult> {
  const prepared = await prepareTest(file, index, planText, host);
  if (!('check' in prepared)) return prepared;
  const controller = new AbortController();
  const interpreter = new Interpreter({ registry: prepared.registry, input: prepared.input, executionMonitor: new UnlimitedExecutionMonitor(), llmAgent: prepared.llmAgent, signal: controller.signal });
  const limit = options.timeout ?? 30_000;
  let runProblem: string | undefined;
  const stop = (message: string) => {
    controller.abort(new Error(message));
    interpreter.abandonRunning('canceled', message);
  };
  const timer = setTimeout(() => {
    runProblem = `the test took longer than ${limit} ms (--timeout)`;
    stop(`the test took longer than ${limit} ms`);
  }, limit);
  const onAbort = () => {
    runProblem ??= 'the test run was stopped';
    stop('the test run was stopped');
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  try {
    await interpreter.updateCode(prepared.planText, prepared.analysis ? { analysis: prepared.analysis } : {});
  } catch (error) {
    return prepared.error(`the plan did not run: ${errorText(error)}`);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
  return prepared.check(valuesOf(interpreter), runProblem);
}

/** Reads, checks and runs one test file; throws TestFileError when the file cannot be used. */
export async function runTestFile(absolute: string, host: PlanTestHost, options: RunTestOptions = {}): Promise<TestFileResult> {
  const file = readTestFile(absolute, host.cwd);
  const planText = readTestPlan(file);
  const started = performance.now();
  const tests: TestCaseResult[] = [];
  for (let i = 0; i < file.tests.length; i++) tests.push(await runTest(file, i, planText, host, options));
  return { file: file.shown, plan: file.planShown, durationMs: round(performance.now() - started), tests };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
