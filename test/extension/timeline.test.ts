/**
 * The run timeline's data (extension/src/timeline/timeline-data.ts): a run record becomes one bar
 * per command call with its status and line, and the critical path is the chain of calls the last
 * one waited for. Also the records Run Plan and Debug Plan keep (extension/src/run/run-records.ts):
 * always in memory, to lightsop.run.recordFile when set, never over a file that is not a record.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Interpreter, parseRunRecord, UnlimitedExecutionMonitor, type CommandRegistry } from '@lightsop/runtime';
import { openRunRecorder, recordTargetProblem, RunHistory } from '../../extension/src/run/run-records';
import { isFromTimelineWebview } from '../../extension/src/timeline/protocol';
import { axisTicks, criticalPath, timelineOf } from '../../extension/src/timeline/timeline-data';

const header = { type: 'run', schema: 'lightsop-run-record', version: 1, tool: { name: 'lightsop', version: '0' }, startedAt: '2026-12-02T00:00:00.000Z', t: 0, plan: { file: 'plans/p.sop', text: '@a x\n@b y\n@c z $a $b\n@d w $a\n', sha256: '0', english: false }, input: { supplied: false }, commands: [] };
const start = (seq: number, variable: string, t: number, lineNumber: number, dependencies: string[] = []) => ({ type: 'command-start', seq, variable, command: variable.toUpperCase(), args: [], raw: `@${variable} ${variable.toUpperCase()}`, lineNumber, dependencies, comment: '', time: '', t });
const end = (seq: number, variable: string, t: number, status = 'success', extra: Record<string, unknown> = { value: `${variable}!` }) => ({ type: 'command-end', seq, variable, status, ...extra, time: '', t, durationMs: 0 });
const jsonl = (lines: object[]) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';

describe('timelineOf', () => {
  it('one bar per call, in start order, with status, line, value; the critical path is what the last call waited for', () => {
    const record = parseRunRecord(jsonl([
      header,
      start(1, 'a', 0, 1), start(2, 'b', 0, 2),
      end(1, 'a', 10),
      start(3, 'd', 10, 4, ['a']),
      end(3, 'd', 15, 'fail', { reason: 'no disk' }),
      end(2, 'b', 30),
      start(4, 'c', 30, 3, ['a', 'b']),
      end(4, 'c', 40),
      { type: 'run-end', aborted: false, variables: {}, durationMs: 41, time: '', t: 41 },
    ]));
    const t = timelineOf(record);
    expect(t.title).toBe('p.sop');
    expect(t.durationMs).toBe(41);
    expect(t.unfinished).toBe(false);
    expect(t.bars.map((b) => [b.variable, b.start, b.end, b.status, b.line, b.critical])).toEqual([
      ['a', 0, 10, 'success', 1, false],
      ['b', 0, 30, 'success', 2, true],
      ['d', 10, 15, 'fail', 4, false],
      ['c', 30, 40, 'success', 3, true],
    ]);
    expect(t.bars.find((b) => b.variable === 'd')!.value).toBe('no disk');
    expect(t.criticalPath).toEqual(['b', 'c']);
    expect(t.criticalMs).toBe(40);
  });

  it('a record cut short: calls without an end are unfinished bars up to the last time recorded', () => {
    const record = parseRunRecord(jsonl([header, start(1, 'a', 0, 1), end(1, 'a', 5), start(2, 'c', 5, 3, ['a'])]) + '{"type":"comm');
    const t = timelineOf(record);
    expect(t.unfinished).toBe(true);
    expect(t.bars.map((b) => [b.variable, b.status, b.end])).toEqual([['a', 'success', 5], ['c', 'running', 5]]);
    expect(t.criticalPath).toEqual(['a', 'c']);
  });

  it('critical path: a chain through the dependency that ended last, never through one that ended after the call started', () => {
    const bars = [
      { variable: 'x', start: 0, end: 50, dependencies: [] },
      { variable: 'y', start: 0, end: 20, dependencies: [] },
      { variable: 'z', start: 20, end: 60, dependencies: ['y', 'x'] },
    ];
    // x ended at 50, after z started at 20: z waited for y.
    expect(criticalPath(bars)).toEqual([1, 2]);
    expect(criticalPath([])).toEqual([]);
    // Long chains are walked without recursion.
    const chain = Array.from({ length: 20000 }, (_, i) => ({ variable: `v${i}`, start: i, end: i + 1, dependencies: i ? [`v${i - 1}`] : [] }));
    expect(criticalPath(chain)).toHaveLength(20000);
  });

  it('axis ticks are round steps covering the run', () => {
    expect(axisTicks(1000, 5)).toEqual([0, 200, 400, 600, 800, 1000]);
    expect(axisTicks(0).length).toBeGreaterThan(1);
  });

  it('the page may only ask to reveal a bar by its number', () => {
    expect(isFromTimelineWebview({ type: 'ready' })).toBe(true);
    expect(isFromTimelineWebview({ type: 'reveal', seq: 3 })).toBe(true);
    expect(isFromTimelineWebview({ type: 'reveal', seq: '3' })).toBe(false);
    expect(isFromTimelineWebview({ type: 'reveal', seq: -1 })).toBe(false);
    expect(isFromTimelineWebview({ type: 'open', file: '/etc/passwd' })).toBe(false);
    expect(isFromTimelineWebview(null)).toBe(false);
  });
});

describe('the timeline of an #!english run', () => {
  it('places each call in the generated plan it ran from: the first plan, then the revision after a failure', async () => {
    const plans = ['@a echo one\n@b boom $a\n@lastAnswer final_answer $b', '# revised\n@a echo one\n\n@c echo two $a\n@lastAnswer final_answer $c'];
    let asked = 0;
    const registry: CommandRegistry = {
      listCommands: () => ['echo', 'boom', 'final_answer'].map((name) => ({ name, description: name })),
      executeCommand(payload, responder) {
        if (payload.command === 'boom') return responder.fail('it broke');
        return responder.success(payload.args.map(String).join(' '));
      },
    };
    const history = new RunHistory();
    const recorder = openRunRecorder({ planUri: 'file:///e.sop', planFile: null, file: null, secrets: [], version: '1.2.3', history });
    const interpreter = new Interpreter({
      registry,
      executionMonitor: new UnlimitedExecutionMonitor(),
      onEvent: recorder.onEvent,
      llmAgent: { executePrompt: () => Promise.resolve(plans[Math.min(asked++, plans.length - 1)]!) },
    });
    const script = '#!english\nsay two things';
    recorder.start({ file: '/ws/e.sop', text: script, english: true, commands: registry.listCommands() });
    const result = await interpreter.updateCode(script);
    recorder.finish({ aborted: result.aborted, variables: interpreter.entries().filter((e) => e.declaration !== null) });
    const record = parseRunRecord(history.lastRun!.text);
    expect(record.plans.map((p) => p.code)).toEqual(plans);
    const t = timelineOf(record);
    expect(t.english).toBe(true);
    const placed = t.bars.map((b) => [b.variable, b.plan, b.line]);
    // @a is unchanged in the revision, so it keeps its result and does not run again.
    expect(placed).toEqual([['a', 0, 1], ['b', 0, 2], ['c', 1, 4], ['lastAnswer', 1, 5]]);
    // Each bar's line is its declaration's in the plan it points at.
    for (const b of t.bars) expect(record.plans[b.plan!]!.code.split('\n')[b.line! - 1]).toMatch(new RegExp(`^@${b.variable} `));
  });
});

describe('run records of Run Plan and Debug Plan', () => {
  const registry: CommandRegistry = {
    listCommands: () => ['echo', 'boom'],
    executeCommand(payload, responder) {
      if (payload.command === 'boom') return responder.fail('it broke');
      return responder.success(String(payload.args[0]));
    },
  };

  async function recordedRun(file: string | null, history: RunHistory) {
    const text = '@a echo hello\n@b echo $a\n@c boom $a\n';
    const recorder = openRunRecorder({ planUri: 'file:///p.sop', planFile: null, file, secrets: ['sk-secret-key'], version: '1.2.3', history });
    const interpreter = new Interpreter({ registry, executionMonitor: new UnlimitedExecutionMonitor(), onEvent: recorder.onEvent });
    recorder.start({ file: '/ws/p.sop', text, english: false, commands: registry.listCommands() });
    const result = await interpreter.updateCode(text);
    recorder.finish({ aborted: result.aborted, variables: interpreter.entries().filter((e) => e.declaration !== null) });
    return recorder;
  }

  it('every run is kept in memory for the timeline, and written to the record file when one is set', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'lsop-timeline-'));
    const history = new RunHistory();
    const seen: string[] = [];
    history.onDidRecord((run) => seen.push(run.planUri));
    await recordedRun(null, history);
    expect(seen).toEqual(['file:///p.sop']);
    const t = timelineOf(parseRunRecord(history.lastRun!.text));
    expect(t.bars.map((b) => `${b.variable}:${b.status}:${b.line}`)).toEqual(['a:success:1', 'b:success:2', 'c:fail:3']);
    expect(t.criticalPath[0]).toBe('a');

    const file = path.join(dir, 'run.jsonl');
    await recordedRun(file, history);
    expect(readFileSync(file, 'utf8')).toBe(history.lastRun!.text);
    expect(history.lastRun!.file).toBe(file);
    // The record reads as `lightsop replay` reads it; it never holds the secret.
    expect(parseRunRecord(readFileSync(file, 'utf8')).end?.variables.c).toMatchObject({ status: 'fail', reason: 'it broke' });
    // A second run replaces the earlier record.
    await recordedRun(file, history);
    expect(parseRunRecord(readFileSync(file, 'utf8')).calls).toHaveLength(3);
  });

  it('refuses a record file that is a folder, the plan, or a file that is not a run record', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'lsop-record-target-'));
    const plan = path.join(dir, 'p.sop');
    writeFileSync(plan, '@a echo x\n');
    const notes = path.join(dir, 'notes.txt');
    writeFileSync(notes, 'my notes\n');
    mkdirSync(path.join(dir, 'folder'));
    expect(recordTargetProblem(path.join(dir, 'new.jsonl'), plan)).toBeNull();
    expect(recordTargetProblem(path.join(dir, 'folder'), plan)).toMatch(/folder/);
    expect(recordTargetProblem(notes, plan)).toMatch(/not a run record/);
    writeFileSync(path.join(dir, 'copy.sop'), '');
    expect(recordTargetProblem(plan, plan)).toMatch(/plan file/);
    expect(() => openRunRecorder({ planUri: 'x', planFile: plan, file: notes, version: '0', history: new RunHistory() })).toThrow(/not a run record/);
    expect(readFileSync(notes, 'utf8')).toBe('my notes\n');
  });
});
