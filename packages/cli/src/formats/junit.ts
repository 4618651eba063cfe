/**
 * JUnit XML for `lightsop test --reporter junit`: the dialect of the Jenkins xUnit plugin's
 * junit-10.xsd, which Jenkins, GitLab, Azure Pipelines and the GitHub test-report actions read.
 * One <testsuite> per test file, one <testcase> per test; a failed expectation is a <failure>, a
 * test that could not run as written (an invalid plan, a call nothing answers) an <error>. Each
 * message names its place as file:line:column. Text is escaped, and characters XML 1.0 cannot hold
 * are replaced, so any value a skill returns gives a well-formed document.
 * Guarded by test/records/plan-tests.test.ts (validated against test/fixtures/junit/junit-10.xsd).
 */
import type { TestFileResult } from '../commands/test';

/** Characters outside XML 1.0's Char production become U+FFFD. */
function xmlText(text: string): string {
  return text
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

function attr(text: string): string {
  return xmlText(text).replace(/"/g, '&quot;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;');
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

export function writeJunit(results: readonly TestFileResult[]): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  let tests = 0;
  let failures = 0;
  let errors = 0;
  let time = 0;
  const suites: string[] = [];
  for (const file of results) {
    const f = file.tests.filter((t) => t.status === 'failed').length;
    const e = file.tests.filter((t) => t.status === 'error').length;
    tests += file.tests.length;
    failures += f;
    errors += e;
    time += file.durationMs;
    suites.push(`  <testsuite name="${attr(file.file)}" tests="${file.tests.length}" failures="${f}" errors="${e}" skipped="0" time="${seconds(file.durationMs)}" file="${attr(file.file)}">`);
    for (const t of file.tests) {
      const open = `    <testcase name="${attr(t.name)}" classname="${attr(file.plan)}" time="${seconds(t.durationMs)}"`;
      if (t.status === 'passed') {
        suites.push(`${open}/>`);
        continue;
      }
      const tag = t.status === 'failed' ? 'failure' : 'error';
      const first = t.problems[0];
      const message = first ? `${first.file}:${first.line}:${first.column}: ${first.message}` : `${file.file}:${t.line}:${t.column}: ${t.status}`;
      const body = t.problems.map((p) => `${p.file}:${p.line}:${p.column}: ${p.message}`).join('\n');
      suites.push(`${open}>`, `      <${tag} type="${t.status === 'failed' ? 'expectation' : 'test-error'}" message="${attr(message)}">${xmlText(body)}</${tag}>`, '    </testcase>');
    }
    suites.push('  </testsuite>');
  }
  out.push(`<testsuites name="lightsop test" tests="${tests}" failures="${failures}" errors="${errors}" time="${seconds(time)}">`);
  for (const line of suites) out.push(line);
  out.push('</testsuites>');
  return out.join('\n') + '\n';
}
