/**
 * `lightsop test` (issue 15 item 3, docs/plan-tests.md): the examples' tests pass; a failing
 * expectation is reported at its line and column in the test file (text, json); the JUnit report
 * validates against the Jenkins xUnit plugin's junit-10.xsd (xmllint compiled to WebAssembly);
 * invalid test files are exit 2 with file:line:column; calls nothing answers are errors; a record
 * can answer the calls; and `lint` loads none of the replay, diff or test modules.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { validateXML } from 'xmllint-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, lightsop, repoRoot, tempTree } from '../helpers/cli';

const XSD = readFileSync(path.join(repoRoot, 'test/fixtures/junit/junit-10.xsd'), 'utf8');

async function junitValid(xml: string): Promise<void> {
  const result = await validateXML({ xml: [{ fileName: 'report.xml', contents: xml }], schema: [{ fileName: 'junit-10.xsd', contents: XSD }] });
  expect(result.errors, result.rawOutput).toEqual([]);
  expect(result.valid).toBe(true);
}

const PLAN = '@name assign "Ada"\n@greeting greet $name\n@lastAnswer final_answer $greeting\n';
/** A test file whose second test fails at a known place: "greeting" on line 10, column 9. */
const TESTS = `{
  "tests": [
    {
      "name": "passes",
      "mocks": [{ "command": "greet", "value": "Hello, Ada!" }, { "command": "final_answer", "value": "ok" }],
      "expect": { "greeting": "Hello, Ada!" }
    },
    {
      "name": "fails <&> \\"quoted\\" \\u0001",
      "mocks": [{ "command": "greet", "args": ["Ada"], "value": "Hi <b>&\\u0007]]>" }, { "command": "final_answer", "value": "ok" }],
      "expect": {
        "greeting": "Hello, Ada!",
        "lastAnswer": { "status": "fail" }
      }
    },
    {
      "name": "has an unmocked call",
      "mocks": [{ "command": "greet", "value": "Hello" }]
    }
  ]
}
`;

beforeAll(() => ensureBuilt());

describe('lightsop test', () => {
  it('the examples\' tests pass (exit 0), as `npm run examples` runs them', () => {
    const res = lightsop(['test', 'examples']);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/5 tests: 5 passed, 0 failed/);
  });

  it('a failing expectation is reported at its line and column in the test file, with expected and actual (text and json); exit 1', () => {
    const dir = tempTree({ 'greet.sop': PLAN, 'greet.sop.test.json': TESTS });
    const text = lightsop(['test'], { cwd: dir });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('✓ passes');
    expect(text.stdout).toContain('greet.sop.test.json:12:9: @greeting: expected value "Hello, Ada!", got "Hi <b>&\\x07]]>"');
    expect(text.stdout).toContain('greet.sop.test.json:13:9: @lastAnswer: expected status fail, got success');
    expect(text.stdout).toMatch(/greet\.sop\.test\.json:18:7: no mock answers @lastAnswer: final_answer Hello/);
    expect(text.stdout).toContain('3 tests: 1 passed, 2 failed');
    const json = lightsop(['test', 'greet.sop', '--reporter', 'json'], { cwd: dir });
    expect(json.code).toBe(1);
    const [file] = JSON.parse(json.stdout) as { file: string; tests: { name: string; status: string; problems: { line: number; column: number; variable?: string; expected?: string; actual?: string }[] }[] }[];
    expect(file!.file).toBe('greet.sop.test.json');
    expect(file!.tests.map((t) => t.status)).toEqual(['passed', 'failed', 'error']);
    expect(file!.tests[1]!.problems[0]).toMatchObject({ line: 12, column: 9, variable: 'greeting', expected: 'Hello, Ada!', actual: 'Hi <b>&\u0007]]>' });
  });

  it('--reporter junit validates against the JUnit XSD CI tools use (passed, failed and error tests, hostile text)', async () => {
    const dir = tempTree({ 'greet.sop': PLAN, 'greet.sop.test.json': TESTS });
    const res = lightsop(['test', '--reporter', 'junit'], { cwd: dir });
    expect(res.code).toBe(1);
    await junitValid(res.stdout);
    expect(res.stdout).toMatch(/<testsuite name="greet\.sop\.test\.json" tests="3" failures="1" errors="1"/);
    expect(res.stdout).toContain('<failure type="expectation" message="greet.sop.test.json:12:9: @greeting: expected value');
    expect(res.stdout).toContain('<error type="test-error"');
    const passing = lightsop(['test', 'examples', '--reporter', 'junit']);
    expect(passing.code).toBe(0);
    await junitValid(passing.stdout);
  });

  it('the validation sees a broken report (the control)', async () => {
    const result = await validateXML({ xml: [{ fileName: 'r.xml', contents: '<testsuites><testsuite name="x"><testcase/></testsuite></testsuites>' }], schema: [{ fileName: 'junit-10.xsd', contents: XSD }] });
    expect(result.valid).toBe(false);
  });

  it('an invalid test file is exit 2 with file:line:column; a missing plan or test file too', () => {
    const dir = tempTree({
      'a.sop': PLAN,
      'a.sop.test.json': '{\n  "tests": [\n    { "name": "x", "expect": { "greeting": 3 } }\n  ]\n}\n',
      'b.sop': PLAN,
      'b.sop.test.json': '{ "tests": [ { "name": "x", } ] }',
      'c.sop.test.json': '{ "tests": [], "plan": "missing.sop" }',
    });
    const a = lightsop(['test', 'a.sop'], { cwd: dir });
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/a\.sop\.test\.json:3:32: tests\.0\.expect\.greeting must be string or object\n.*a\.sop\.test\.json: not a valid test file/);
    const b = lightsop(['test', 'b.sop.test.json'], { cwd: dir });
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/b\.sop\.test\.json:1:29: not valid JSON/);
    const c = lightsop(['test', 'c.sop.test.json'], { cwd: dir });
    expect(c.code).toBe(2);
    expect(c.stderr).toMatch(/c\.sop\.test\.json:1:24: cannot read the plan missing\.sop/);
    expect(lightsop(['test', 'nothing-here'], { cwd: dir }).code).toBe(2);
  });

  it('"record" answers the calls no mock answers, offline; a mock still wins', () => {
    const dir = tempTree({
      'p.sop': '@a echo one\n@b echo $a two\n',
      'skills.mjs': 'export default { echo: { description: "echo", run: (args) => args.join(" ") } };\n',
    });
    expect(lightsop(['run', 'p.sop', '--skills', 'skills.mjs', '--record', 'p.jsonl'], { cwd: dir }).code).toBe(0);
    writeFileSync(path.join(dir, 'p.sop.test.json'), JSON.stringify({
      tests: [
        { name: 'from the record', record: 'p.jsonl', expect: { b: 'one two' }, failures: [] },
        { name: 'a mock wins', record: 'p.jsonl', mocks: [{ command: 'echo', args: ['one'], value: 'uno' }], expect: { a: 'uno', b: { status: 'fail', pattern: 'no mock answers this call: echo uno two' } } },
      ],
    }, null, 2));
    const res = lightsop(['test', '--reporter', 'json'], { cwd: dir });
    const [file] = JSON.parse(res.stdout) as { tests: { status: string; problems: { message: string }[] }[] }[];
    expect(file!.tests[0]!.status).toBe('passed');
    // The second test expects @b's failure; the call neither a mock nor the record answers is its error.
    expect(file!.tests[1]!.status).toBe('error');
    expect(file!.tests[1]!.problems.map((p) => p.message)).toEqual(['no mock, record answers @b: echo uno two']);
  });
});

describe('the CLI loads replay, diff and test only when they run', () => {
  it('lint, fmt and run load none of their modules; test does (the control)', () => {
    const dir = tempTree({ 'p.sop': '@a assign x\n', 'p.sop.test.json': '{ "tests": [ { "name": "t", "expect": { "a": "x" } } ] }' });
    const PRELOAD = path.join(repoRoot, 'test/distributed/fixtures/record-modules.mjs');
    const chunks = (args: string[]) => {
      const log = path.join(dir, `modules-${args[0]}.txt`);
      writeFileSync(log, '');
      const res = lightsop(args, { cwd: dir, env: { LIGHTSOP_MODULE_LOG: log, NODE_OPTIONS: `--import=${PRELOAD}` } });
      expect(res.code, res.stderr).toBe(0);
      return readFileSync(log, 'utf8').split('\n').filter((u) => u.includes('/packages/cli/dist/')).map((u) => readFileSync(new URL(u), 'utf8')).join('\n');
    };
    const MARKERS = ['answered from the record', 'plan text differs', 'no mock answers this call'];
    for (const args of [['lint', 'p.sop'], ['fmt', 'p.sop'], ['run', 'p.sop']]) {
      const loaded = chunks(args);
      for (const marker of MARKERS) expect(loaded.includes(marker), `lightsop ${args.join(' ')} loaded "${marker}"`).toBe(false);
    }
    expect(chunks(['test', 'p.sop']).includes('no mock answers this call')).toBe(true);
  });
});
