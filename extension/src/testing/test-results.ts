/**
 * What the Test Explorer shows of a plan test, without `vscode`: the trust rule (a test that may
 * run the workspace's skills module is refused in an untrusted workspace; mock-only tests run),
 * and a result's problems as messages at editor positions (the runner counts lines the language's
 * way, LF only; positions.ts converts them through offsets).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestCaseInfo, TestCaseResult } from '../../../packages/cli/src/plan-tests/runner';
import { editorPositionOfLineColumn, type EditorPosition } from '../positions';

/** Why a test may not run in this workspace, or null. */
export function trustRefusal(test: TestCaseInfo, trusted: boolean): string | null {
  if (trusted || !test.usesSkills) return null;
  return `Not run: this workspace is not trusted, and the test "${test.name}" has "skills": true, which runs the workspace's skills module (workspace code). Trust the workspace to run it; tests answered by mocks and records run without trust.`;
}

export interface EditorTestMessage {
  readonly message: string;
  /** Absolute path of the file the problem is in (the test file, or the plan). */
  readonly file: string;
  readonly position: EditorPosition;
  /** Both present: the expectation and what the run gave, for the diff view. */
  readonly expected?: string;
  readonly actual?: string;
}

/**
 * The messages of a result: each problem at its place. `cwd` is the folder the runner showed paths
 * relative to; `readText` reads a file's current text (an open editor's, else the disk's).
 */
export function testMessages(result: TestCaseResult, cwd: string, readText: (file: string) => string | null = readDisk): EditorTestMessage[] {
  const texts = new Map<string, string | null>();
  return result.problems.map((p) => {
    const file = path.resolve(cwd, p.file);
    if (!texts.has(file)) texts.set(file, readText(file));
    const text = texts.get(file) ?? '';
    const position = editorPositionOfLineColumn(text, p.line, p.column);
    const diff = p.expected !== undefined && p.actual !== undefined ? { expected: p.expected, actual: p.actual } : {};
    return { message: p.message, file, position, ...diff };
  });
}

function readDisk(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
