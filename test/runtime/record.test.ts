/**
 * The runtime's run recorder and replay in-process (docs/run-records.md), as any host (the CLI,
 * an editor) uses them: the recorder consumes the Interpreter's events into a sink; a replay from
 * its record gives every variable the same public value, for each outcome (success with plain and
 * non-plain data, fail, canceled with its root cause, no response), without calling the registry.
 */
import { describe, expect, it } from 'vitest';
import { Interpreter, RunRecorder, UnlimitedExecutionMonitor, parseRunRecord, recordedVariables, replayFromRecord, type RecordSink } from '@lightsop/runtime';
import { testRegistry } from '../helpers/registry';

const PLAN = [
  '@a emit hello',
  '@obj object',
  '@odd oddity',
  '@f failer',
  '@c canceler',
  '@n nothing',
  '@after combine $a $obj',
  '@below combine $c',
].join('\n');

function registry() {
  return testRegistry({
    object: (_p, r) => r.success({ list: [1, 2], name: 'x' }),
    oddity: (_p, r) => r.success(new Date(0)),
    nothing: () => undefined,
  });
}

async function record(): Promise<{ lines: string[]; values: Map<string, unknown> }> {
  const lines: string[] = [];
  const sink: RecordSink = { write: (line) => void lines.push(line) };
  const recorder = new RunRecorder(sink, { secrets: ['hunter2-secret'] });
  const reg = registry();
  recorder.start({ file: 'p.sop', text: PLAN, english: false, commands: reg.listCommands() });
  const interpreter = new Interpreter({ registry: reg, executionMonitor: new UnlimitedExecutionMonitor(), onEvent: recorder.onEvent });
  const result = await interpreter.updateCode(PLAN);
  recorder.finish({ aborted: result.aborted, variables: interpreter.entries().map((e) => ({ name: e.name, value: e.value })) });
  const values = new Map<string, unknown>();
  for (const e of interpreter.entries()) values.set(e.name, interpreter.getVarValue(e.name));
  return { lines, values };
}

describe('RunRecorder and replayFromRecord', () => {
  it('records every line whole, one write each, and ends with run-end', async () => {
    const { lines } = await record();
    for (const line of lines) expect(line.endsWith('\n') && line.indexOf('\n') === line.length - 1).toBe(true);
    const types = lines.map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types[0]).toBe('run');
    expect(types.at(-1)).toBe('run-end');
    expect(types.filter((t) => t === 'command-start').length).toBe(7); // @below waits on a cancellation
    const odd = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.type === 'command-end' && l.variable === 'odd');
    expect(odd).toMatchObject({ status: 'success', lossy: true });
  });

  it('a replay gives every variable the same public value without calling the registry', async () => {
    const { lines, values } = await record();
    const parsed = parseRunRecord(lines.join(''));
    expect([...recordedVariables(parsed).keys()].sort()).toEqual([...values.keys()].sort());
    const replay = replayFromRecord(parsed);
    const interpreter = new Interpreter({ registry: replay.registry, executionMonitor: new UnlimitedExecutionMonitor() });
    await interpreter.updateCode(PLAN);
    for (const [name, value] of values) {
      // A Date is recorded by its text (lossy): its public form is that text either way.
      expect(interpreter.getVarValue(name), name).toEqual(name === 'obj' ? value : typeof value === 'object' ? String(value) : value);
    }
    expect(interpreter.getValue('c')!.rootCause).toMatchObject({ name: 'c', reason: 'nope' });
    expect(replay.misses).toEqual([]);
  });

  it('redacts the configured secrets, bearer tokens and URL credentials from every string', async () => {
    const lines: string[] = [];
    const recorder = new RunRecorder({ write: (line) => void lines.push(line) }, { secrets: ['hunter2-secret'] });
    const reg = testRegistry({ leak: (_p, r) => r.success('pw=hunter2-secret Bearer abcdefghijkl https://user:pass@example.com/') });
    recorder.start({ file: null, text: '@x leak hunter2-secret\n', english: false, input: 'hunter2-secret', commands: reg.listCommands() });
    const interpreter = new Interpreter({ registry: reg, input: 'hunter2-secret', onEvent: recorder.onEvent });
    await interpreter.updateCode('@x leak hunter2-secret\n');
    recorder.finish({ aborted: false, variables: interpreter.entries().map((e) => ({ name: e.name, value: e.value })) });
    const text = lines.join('');
    expect(text).not.toContain('hunter2-secret');
    expect(text).not.toContain('abcdefghijkl');
    expect(text).not.toContain('user:pass');
    expect(text).toContain('pw=***');
  });

  it('a sink that throws stops the recording, never the run', async () => {
    let writes = 0;
    const recorder = new RunRecorder({ write: () => { writes++; throw new Error('disk full'); } });
    const reg = testRegistry();
    recorder.start({ file: null, text: '@a emit 1\n', english: false, commands: [] });
    const interpreter = new Interpreter({ registry: reg, onEvent: recorder.onEvent });
    await interpreter.updateCode('@a emit 1\n');
    expect(interpreter.getVarValue('a')).toBe('1');
    expect(recorder.error?.message).toBe('disk full');
    expect(writes).toBe(1);
  });
});
