/**
 * Run records, replay and diff (issue 15 items 1 and 2, docs/run-records.md): the built CLI
 * records examples/report.sop and replays it offline with no skills module; a recording run
 * killed with SIGKILL leaves a valid record that replays what finished; API keys and bearer
 * tokens never reach a record; every line validates against schemas/run-record.schema.json.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseRunRecord } from '../../packages/runtime/src/index';
import { ensureBuilt, lightsop, lightsopAsync, repoRoot, tempTree } from '../helpers/cli';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';
import { waitFor } from '../helpers/sync';
import { killAll, removeTempDirs, spawnCli } from '../distributed/procs';

/** The slice of Ajv's API the test uses. */
type AjvClass = new (options: object) => { compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown } };
// The CLI's own Ajv (8, JSON Schema 2020-12); the root's is ESLint's older one.
const { Ajv2020 } = createRequire(path.join(repoRoot, 'packages/cli/package.json'))('ajv/dist/2020') as { Ajv2020: AjvClass };
const schema = JSON.parse(readFileSync(path.join(repoRoot, 'schemas/run-record.schema.json'), 'utf8')) as object;
const validateLine = new Ajv2020({ allErrors: true, validateFormats: false }).compile(schema);

/** Every complete line of a record validates against the schema; returns the parsed lines. */
function schemaValid(text: string): { type: string; [key: string]: unknown }[] {
  const lines = text.split('\n');
  lines.pop();
  return lines.map((line, i) => {
    const parsed = JSON.parse(line) as { type: string };
    expect(validateLine(parsed), `line ${i + 1}: ${JSON.stringify(validateLine.errors)}`).toBe(true);
    return parsed;
  });
}

beforeAll(() => ensureBuilt());
afterAll(() => removeTempDirs());

describe('lightsop run --record and lightsop replay', () => {
  it('a recorded run of examples/report.sop replays offline, without the skills module, to the same variables', () => {
    const dir = tempTree({});
    const record = path.join(dir, 'report.record.jsonl');
    const run = lightsop(['run', 'report.sop', '--json', '--record', record], { cwd: path.join(repoRoot, 'examples') });
    expect(run.code, run.stderr).toBe(0);
    const lines = schemaValid(readFileSync(record, 'utf8'));
    expect(lines[0]).toMatchObject({ type: 'run', version: 1, plan: { file: 'report.sop', english: false } });
    expect(lines.at(-1)).toMatchObject({ type: 'run-end', aborted: false });
    const start = lines.find((l) => l.type === 'command-start' && l.variable === 'summary');
    expect(start).toMatchObject({ command: 'summarize', dependencies: ['article'], lineNumber: 5 });
    expect((start!.args as unknown[])[1]).toBe('2');

    // Elsewhere: no skills module, no config, no data file. Everything comes from the record.
    const offline = tempTree({});
    expect(existsSync(path.join(offline, 'skills.mjs'))).toBe(false);
    const replay = lightsop(['replay', record, '--json'], { cwd: offline });
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout).variables).toEqual(JSON.parse(run.stdout).variables);
    expect(replay.stderr).toMatch(/5 commands answered from the record, 0 calls not answered/);
  });

  it('an edited plan replays what matches and names each command the record cannot answer, with file:line:column', () => {
    const dir = tempTree({});
    const record = path.join(dir, 'r.jsonl');
    expect(lightsop(['run', 'report.sop', '--record', record], { cwd: path.join(repoRoot, 'examples') }).code).toBe(0);
    const edited = readFileSync(path.join(repoRoot, 'examples/report.sop'), 'utf8').replace('summarize $article 2', 'summarize $article 3') + '@shout upper $words\n';
    writeFileSync(path.join(dir, 'edited.sop'), edited);
    const res = lightsop(['replay', record, '--plan', 'edited.sop', '--json'], { cwd: dir });
    expect(res.code).toBe(1);
    const out = JSON.parse(res.stdout) as { variables: Record<string, { status: string; value: string }> };
    expect(out.variables.article!.status).toBe('success');
    expect(out.variables.words).toEqual({ status: 'success', value: '63' });
    expect(out.variables.summary!.status).toBe('fail');
    expect(out.variables.summary!.value).toMatch(/^replay: the record has no call of this command with these arguments/);
    expect(res.stderr).toMatch(/^edited\.sop:5:1: replay: .*@summary: summarize /m);
    expect(res.stderr).toMatch(/^edited\.sop:18:1: replay: .*@shout: upper 63$/m);
  });

  it('a recording run killed with SIGKILL half way leaves a valid record, and replaying it gives what had finished', async () => {
    const dir = tempTree({
      'plan.sop': '@a echo one\n@b echo two\n@c echo $a $b\n@slow hang $c\n@after echo $slow\n',
      'skills.mjs': [
        'export default {',
        '  echo: { description: "echo", run: (args) => args.join(" ") },',
        '  hang: { description: "never answers", run: () => new Promise(() => { setInterval(() => {}, 1000); }) },',
        '};',
      ].join('\n'),
    });
    const record = path.join(dir, 'killed.jsonl');
    const proc = spawnCli(['run', 'plan.sop', '--skills', 'skills.mjs', '--record', record], { cwd: dir });
    try {
      // The state to kill in: @c has finished and @slow is running.
      await waitFor('@slow to start', () => existsSync(record) && /"command-start"[^\n]*"variable":"slow"/.test(readFileSync(record, 'utf8')));
      proc.signal('SIGKILL');
      expect(await proc.exited).toBe(128 + 9);
    } finally {
      await killAll();
    }
    const text = readFileSync(record, 'utf8');
    schemaValid(text);
    const parsed = parseRunRecord(text);
    expect(parsed.end).toBeNull();
    expect(parsed.calls.filter((c) => c.end !== null).map((c) => c.start.variable).sort()).toEqual(['a', 'b', 'c']);
    // A record cut in the middle of a line (a kill during a write) reads the same, without that line.
    expect(parseRunRecord(text + '{"type":"command-end","seq":4,"vari').calls.length).toBe(parsed.calls.length);

    const offline = tempTree({});
    const replay = lightsop(['replay', record, '--json'], { cwd: offline });
    expect(replay.code).toBe(1);
    const vars = (JSON.parse(replay.stdout) as { variables: Record<string, { status: string; value: string }> }).variables;
    expect(vars.a).toEqual({ status: 'success', value: 'one' });
    expect(vars.c).toEqual({ status: 'success', value: 'one two' });
    expect(vars.slow!.status).toBe('fail');
    expect(vars.slow!.value).toMatch(/the recorded run stopped before this command finished/);
    expect(vars.after!.status).toBe('undefined');
    expect(replay.stderr).toMatch(/did not finish/);
    expect(replay.stderr).toMatch(/plan\.sop \(recorded in [^)]*killed\.jsonl\):4:1: replay: the recorded run stopped before this command finished: @slow: hang one two/);
  }, 60_000);

  it('refuses to overwrite the plan or a file that is not a run record (exit 3, the file unchanged)', () => {
    const dir = tempTree({ 'p.sop': '@a assign x\n', 'notes.txt': 'my notes\n' });
    const self = lightsop(['run', 'p.sop', '--record', 'p.sop'], { cwd: dir });
    expect(self.code).toBe(3);
    expect(self.stderr).toMatch(/--record p\.sop: that is the plan file/);
    const other = lightsop(['run', 'p.sop', '--record', 'notes.txt'], { cwd: dir });
    expect(other.code).toBe(3);
    expect(other.stderr).toMatch(/not a run record; refusing to overwrite it/);
    expect(readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('my notes\n');
    expect(readFileSync(path.join(dir, 'p.sop'), 'utf8')).toBe('@a assign x\n');
    // An earlier record is replaced.
    expect(lightsop(['run', 'p.sop', '--record', 'r.jsonl'], { cwd: dir }).code).toBe(0);
    expect(lightsop(['run', 'p.sop', '--record', 'r.jsonl'], { cwd: dir }).code).toBe(0);
  });

  it('a record that is not one is a clear error with its line (exit 3)', () => {
    const dir = tempTree({ 'bad.jsonl': '{"type":"run","schema":"lightsop-run-record","version":1,"plan":{"text":"@a assign x\\n"}}\nnot json\n', 'other.jsonl': '{"x":1}\n' });
    const bad = lightsop(['replay', 'bad.jsonl'], { cwd: dir });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/^lightsop: bad\.jsonl:2:1: not a JSON line/m);
    const other = lightsop(['replay', 'other.jsonl'], { cwd: dir });
    expect(other.code).toBe(3);
    expect(other.stderr).toMatch(/other\.jsonl:1:1: .*not a run record|other\.jsonl:1:1: a record line/);
  });
});

describe('#!english runs: model calls are recorded without secrets and replayed offline', () => {
  let server: LlmServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it('records model, messages and usage; no API key, bearer token or Authorization header is written; the replay needs no server', async () => {
    const KEY = 'sk-test-0123456789-SECRET';
    server = await startLlmServer(() => '@leak leak\n@lastAnswer final_answer $leak');
    const dir = tempTree({
      'e.sop': '#!english\nLeak what you can.\n',
      'skills.mjs': `export default { leak: { description: 'returns what it knows', run: () => 'key=' + process.env.LIGHTSOP_LLM_API_KEY + ' Authorization: Bearer abcdefghijklmnop' },\n  final_answer: { description: 'the answer', run: ([v]) => v } };\n`,
    });
    const record = path.join(dir, 'e.jsonl');
    const env = { LIGHTSOP_LLM_API_KEY: KEY };
    const run = await lightsopAsync(['run', 'e.sop', '--skills', 'skills.mjs', '--llm-base-url', server.url, '--llm-model', 'test-model', '--record', record, '--json'], { cwd: dir, env });
    expect(run.code, run.stderr).toBe(0);
    const text = readFileSync(record, 'utf8');
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('abcdefghijklmnop');
    expect(text).not.toMatch(/"authorization"/i);
    const lines = schemaValid(text);
    const request = lines.find((l) => l.type === 'model-request')!;
    expect(request.model).toBe('test-model');
    expect((request.messages as { role: string; content: string }[]).at(-1)!.content).toContain('Leak what you can.');
    expect(lines.find((l) => l.type === 'model-response')).toMatchObject({ content: '@leak leak\n@lastAnswer final_answer $leak', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } });
    expect(lines.some((l) => l.type === 'plan-generated')).toBe(true);

    await server.close();
    server = null;
    const offline = tempTree({});
    const replay = lightsop(['replay', record, '--json'], { cwd: offline });
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout).variables).toEqual(JSON.parse(run.stdout).variables);
  }, 60_000);
});

describe('lightsop diff', () => {
  it('reports status and value changes, new and removed declarations (text and --json), exit 1; identical runs exit 0', () => {
    const dir = tempTree({
      'a.sop': '@x assign one\n@y assign two\n@gone assign bye\n',
      'b.sop': '@x assign one\n@y assign three\n@fresh assign hi\n',
    });
    for (const name of ['a', 'b']) expect(lightsop(['run', `${name}.sop`, '--record', `${name}.jsonl`], { cwd: dir }).code).toBe(0);
    expect(lightsop(['run', 'a.sop', '--record', 'a2.jsonl'], { cwd: dir }).code).toBe(0);
    const json = lightsop(['diff', 'a.jsonl', 'b.jsonl', '--json'], { cwd: dir });
    expect(json.code).toBe(1);
    const out = JSON.parse(json.stdout);
    expect(out.planChanged).toBe(true);
    expect(out.changed).toEqual([{ variable: 'y', a: { status: 'success', value: 'two' }, b: { status: 'success', value: 'three' } }]);
    expect(out.added).toEqual([{ variable: 'fresh', b: { status: 'success', value: 'hi' } }]);
    expect(out.removed).toEqual([{ variable: 'gone', a: { status: 'success', value: 'bye' } }]);
    expect(out.timing.map((t: { variable: string }) => t.variable).sort()).toEqual(['fresh', 'gone', 'x', 'y']);
    const text = lightsop(['diff', 'a.jsonl', 'b.jsonl'], { cwd: dir });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('~ @y: success "two" -> success "three"');
    expect(text.stdout).toContain('+ @fresh: success "hi"');
    expect(text.stdout).toContain('- @gone: success "bye"');
    const same = lightsop(['diff', 'a.jsonl', 'a2.jsonl'], { cwd: dir });
    expect(same.code).toBe(0);
    expect(same.stdout).toContain('no status or value changes');
    expect(lightsop(['diff', 'a.jsonl', 'missing.jsonl'], { cwd: dir }).code).toBe(2);
  });
});

