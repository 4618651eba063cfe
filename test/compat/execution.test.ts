// Spec section 10, items 58-101, through the compat entry point, in the style of AchillesAgentLib's
// tests: positional constructor, `await interpreter.ready`, `getVarValue`, `updateCode` re-runs.
import { describe, expect, it } from 'vitest';
import LightSOPLangInterpreter, { DefaultExecutionMonitor, cancelEuristic, createSuccessValue, createUndefinedValue } from '@lightsop/runtime/compat';
import { checklistRegistry, createRegistry, gate, settle, until, type ExecuteCommand } from './helpers';

async function run(code: string, extra: Record<string, ExecuteCommand> = {}) {
  const { registry, history, payloads } = checklistRegistry(extra);
  const interpreter = new LightSOPLangInterpreter(code, registry);
  await interpreter.ready;
  return { interpreter, history, payloads };
}

const values = (interpreter: LightSOPLangInterpreter, ...names: string[]) => names.map((n) => interpreter.getVarValue(n));

describe('values and outcomes', () => {
  it('58: public forms of the four statuses, and undefined for an unknown name', async () => {
    const { interpreter } = await run('@s emit hi\n@f failer\n@c canceler\n@u nothing\n@w emit $f', { nothing: () => undefined });
    expect(values(interpreter, 's', 'f', 'c', 'u', 'w', 'missing')).toEqual([
      'hi', 'fail:oops', 'canceled:command canceler canceled (nope)', 'undefined:command returned no response', 'undefined:waiting for f', undefined,
    ]);
    interpreter.variables.get('s')!.value = createUndefinedValue();
    expect(interpreter.getVarValue('s')).toBe('undefined');
  });

  it("59: fail('') and fail() give fail:unknown failure", async () => {
    const { interpreter } = await run('@a a\n@b b', { a: (_p, r) => r.fail(''), b: (_p, r) => r.fail() });
    expect(values(interpreter, 'a', 'b')).toEqual(['fail:unknown failure', 'fail:unknown failure']);
  });

  it("60: a thrown Error('') gives fail: and a thrown string gives its text", async () => {
    const { interpreter } = await run('@e e\n@s s', {
      e: () => {
        throw new Error('');
      },
      s: () => {
        throw 'x';
      },
    });
    expect(values(interpreter, 'e', 's')).toEqual(['fail:', 'fail:x']);
  });

  it("61: cancel('') names the command and says no reason was provided", async () => {
    const { interpreter } = await run('@x stopper', { stopper: (_p, r) => r.cancel('') });
    expect(interpreter.getVarValue('x')).toBe('canceled:command stopper canceled (no reason provided)');
  });

  it('62: the guard example gives its three cancellation texts and runs neither task nor finalize (Reference)', async () => {
    const { interpreter, history } = await run('@feature guard off\n@taskA   task $feature body\n@final   finalize $taskA', {
      guard: (_p, r) => r.cancel('guard disabled'),
      task: (_p, r) => r.success('t'),
      finalize: (_p, r) => r.success('f'),
    });
    expect(values(interpreter, 'feature', 'taskA', 'final')).toEqual([
      'canceled:command guard canceled (guard disabled)',
      'canceled:because command guard canceled (guard disabled) via feature',
      'canceled:because command guard canceled (guard disabled) via taskA',
    ]);
    expect(interpreter.variables.get('final')!.value).toMatchObject({ via: 'taskA', rootCause: { name: 'feature', reason: 'guard disabled', command: 'guard' } });
    expect(history).toEqual(['guard off']);
  });

  it('63: returning a bare string is an invalid result', async () => {
    const { interpreter } = await run('@x bare', { bare: () => 'text' });
    expect(interpreter.getVarValue('x')).toBe('fail:invalid result from executeCommand');
  });

  it('64: returning nothing leaves the variable undefined, blocks dependents and counts no failure (Reference)', async () => {
    const monitor = new DefaultExecutionMonitor();
    const { registry, history } = checklistRegistry({ nothing: () => undefined });
    const interpreter = new LightSOPLangInterpreter('@a nothing\n@b emit $a', registry, { executionMonitor: monitor });
    await interpreter.ready;
    expect(values(interpreter, 'a', 'b')).toEqual(['undefined:command returned no response', 'undefined:waiting for a']);
    expect(history).toEqual(['nothing']);
    expect(monitor.getStats().failureCounts).toEqual({});
  });

  it('65: the last responder value is used when nothing is returned', async () => {
    const { interpreter } = await run('@a a\n@b b', {
      a: (_p, r) => {
        r.success('s');
        return null;
      },
      b: (_p, r) => {
        r.success('s');
        r.fail('later');
      },
    });
    expect(values(interpreter, 'a', 'b')).toEqual(['s', 'fail:later']);
  });

  it('66: an exception becomes a failure with its message and counts once for the monitor (Reference)', async () => {
    const monitor = new DefaultExecutionMonitor({ failureLimit: 5 });
    let calls = 0;
    const registry = {
      executeCommand: async () => {
        calls += 1;
        throw new Error('boom');
      },
      listCommands: () => [{ name: 'boom', description: 'Always throws' }],
    };
    const interpreter = new LightSOPLangInterpreter('@x boom', registry, { executionMonitor: monitor });
    await interpreter.ready;
    expect(interpreter.getVarValue('x')).toBe('fail:boom');
    expect(calls).toBe(1);
    expect(monitor.getStats().failureCounts.boom).toBe(1);
  });

  it("67 (Q15): a returned { status: 'cancelled' } is a cancellation that propagates; an unknown status is invalid", async () => {
    const { interpreter } = await run('@a custom\n@b emit $a\n@w weird', {
      custom: () => ({ status: 'cancelled', raw: 'x', data: 'custom' }),
      weird: () => ({ status: 'done', raw: 'x', data: 'd' }),
    });
    expect(values(interpreter, 'a', 'b', 'w')).toEqual(['canceled:custom', 'canceled:because command a canceled (custom) via a', 'fail:invalid result from executeCommand']);
  });

  it('68: a canceled value without a root cause names the variable downstream', async () => {
    const { interpreter } = await run('@a custom\n@b emit $a', { custom: () => ({ status: 'canceled', raw: 'r', data: 'custom' }) });
    expect(interpreter.getVarValue('b')).toBe('canceled:because command a canceled (custom) via a');
    expect(interpreter.variables.get('a')!.value.rootCause).toEqual({ name: 'a', reason: 'custom' });
  });

  it('69: timestamps of successive values are strictly increasing', async () => {
    const { interpreter } = await run('@a emit 1\n@b emit $a\n@c emit $b\n@d emit $c');
    const stamps = ['a', 'b', 'c', 'd'].map((n) => interpreter.variables.get(n)!.value.timestamp);
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]!);
  });
});

describe('execution', () => {
  it('70: a chain runs once each, in order (Reference)', async () => {
    const { interpreter, history } = await run('@source emit foo\n@middle combine $source bar\n@final combine $source $middle');
    expect(values(interpreter, 'source', 'middle', 'final')).toEqual(['foo', 'foo+bar', 'foo+foo+bar']);
    expect(history).toEqual(['emit foo', 'combine foo bar', 'combine foo foo+bar']);
  });

  it('71: a failed step blocks its dependents and onFail receives it (Reference)', async () => {
    const { registry, history } = checklistRegistry();
    let recorded: unknown = null;
    const interpreter = new LightSOPLangInterpreter('@seed emit ok\n@broken failer $seed\n@later combine $broken tail', registry, (details) => {
      recorded = details;
    });
    await interpreter.ready;
    expect(values(interpreter, 'seed', 'broken', 'later')).toEqual(['ok', 'fail:oops', 'undefined:waiting for broken']);
    expect(history).toEqual(['emit ok', 'failer ok']);
    expect(recorded).toEqual([{ variable: 'broken', reason: 'fail:oops' }]);
  });

  it('72: a failure does not stop independent declarations', async () => {
    const { interpreter } = await run('@bad failer\n@good emit fine\n@after combine $good x');
    expect(values(interpreter, 'bad', 'good', 'after')).toEqual(['fail:oops', 'fine', 'fine+x']);
  });

  it('73: two independent asynchronous commands both start before either settles (Reference)', async () => {
    const starts: string[] = [];
    const pending: { label: unknown; resolve: (v: unknown) => void; response: { success(d: unknown): unknown } }[] = [];
    const registry = createRegistry(({ command, args }, response) => {
      if (command === 'asyncTask') {
        starts.push(`async:${String(args[0])}`);
        return new Promise((resolve) => {
          pending.push({ label: args[0], resolve, response });
          if (pending.length === 2) for (const t of pending.splice(0)) t.resolve(t.response.success(`task-${String(t.label)}`));
        });
      }
      starts.push([command, ...args].join(' '));
      return response.success(args.join('&'));
    });
    const interpreter = new LightSOPLangInterpreter('@first asyncTask 1\n@second asyncTask 2\n@final combine $first $second', registry);
    await interpreter.ready;
    expect(starts).toEqual(['async:1', 'async:2', 'combine task-1 task-2']);
    expect(interpreter.getVarValue('final')).toBe('task-1&task-2');
  });

  it('74: roots start in name order by UTF-16 code units', async () => {
    const { history } = await run(['zeta', 'alpha', 'Zed', '_u', 'a10', 'a9'].map((n) => `@${n} emit ${n}`).join('\n'));
    expect(history).toEqual(['emit Zed', 'emit _u', 'emit a10', 'emit a9', 'emit alpha', 'emit zeta']);
  });

  it('75: fan-out from roots starts level by level, by name', async () => {
    const { history } = await run('@a emit 1\n@b emit 2\n@z1 combine $a\n@y1 combine $b');
    expect(history).toEqual(['emit 1', 'emit 2', 'combine 2', 'combine 1']);
  });

  it('76: a declaration starts as soon as its own dependencies are done (dataflow)', async () => {
    // @s settles only once @g has started: a scheduler that waited for it would never finish.
    const events: string[] = [];
    const depStarted = gate();
    const { registry } = checklistRegistry({
      slow: async (_p, r) => {
        await depStarted.promise;
        events.push('slow settled');
        return r.success('s');
      },
      fast: async (_p, r) => {
        await settle();
        return r.success('f');
      },
      dep: (_p, r) => {
        events.push('dep started');
        depStarted.open();
        return r.success('g');
      },
    });
    const interpreter = new LightSOPLangInterpreter('@s slow\n@f fast\n@g dep $f', registry);
    await interpreter.ready;
    expect(events).toEqual(['dep started', 'slow settled']);
  });

  it('77: a dependency referenced three times runs once and is passed three times', async () => {
    const { history } = await run('@a emit v\n@b combine $a $a $a');
    expect(history).toEqual(['emit v', 'combine v v v']);
  });

  it('78: below a failing and a canceling step, the outcome that settles last wins', async () => {
    // The test releases one command, waits until its value is stored, then releases the other.
    const outcome = async (failFirst: boolean) => {
      const release = { a: gate(), b: gate() };
      let started = 0;
      const { registry } = checklistRegistry({
        slowFail: async (_p, r) => {
          started++;
          await release.a.promise;
          return r.fail('oops');
        },
        slowCancel: async (_p, r) => {
          started++;
          await release.b.promise;
          return r.cancel('nope');
        },
      });
      const interpreter = new LightSOPLangInterpreter('@a slowFail\n@b slowCancel\n@c combine $a $b', registry);
      await until(() => started === 2, 'both commands to start');
      const [first, second] = failFirst ? (['a', 'b'] as const) : (['b', 'a'] as const);
      release[first].open();
      await until(() => interpreter.variables.get(first)!.value.status !== 'undefined', `@${first} to settle`);
      release[second].open();
      await interpreter.ready;
      return interpreter.getVarValue('c');
    };
    expect(await outcome(true)).toBe('canceled:because command slowCancel canceled (nope) via b');
    expect(await outcome(false)).toBe('undefined:upstream a');
  });

  it('79: an exception thrown by onFail does not reject the update', async () => {
    const { registry } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@x failer', registry, () => {
      throw new Error('handler broke');
    });
    await expect(interpreter.ready).resolves.toBeUndefined();
    expect(interpreter.getVarValue('x')).toBe('fail:oops');
  });
});

describe('updates', () => {
  it('80, 81: the same code again runs nothing; an added declaration runs alone (Reference)', async () => {
    const { registry, history } = checklistRegistry();
    const code = '@source emit base\n@dependent combine $source extra';
    const interpreter = new LightSOPLangInterpreter(code, registry);
    await interpreter.ready;
    expect(history).toEqual(['emit base', 'combine base extra']);
    history.length = 0;
    void interpreter.updateCode(code); // settles through interpreter.ready, awaited next
    await interpreter.ready;
    expect(history).toEqual([]);
    void interpreter.updateCode(`${code}\n@aux emit aux`); // settles through interpreter.ready, awaited next
    await interpreter.ready;
    expect(history).toEqual(['emit aux']);
    expect(values(interpreter, 'source', 'dependent', 'aux')).toEqual(['base', 'base+extra', 'aux']);
  });

  it('82: changing only comments, blank lines, order or quoting runs nothing', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit x\n@b combine $a y', registry);
    await interpreter.ready;
    history.length = 0;
    await interpreter.updateCode('# the first\n\n@b combine $a "y" # later\n\n\n@a emit \'x\'');
    expect(history).toEqual([]);
    expect(interpreter.variables.get('b')!.comment).toBe('later');
  });

  it('83: changing arguments re-runs the declaration and its dependents, even when its value does not change', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit x\n@b combine $a y', registry);
    await interpreter.ready;
    history.length = 0;
    await interpreter.updateCode('@a emit x ignored\n@b combine $a y');
    expect(history).toEqual(['emit x ignored', 'combine x y']);
  });

  it('84: removing a declaration deletes its variable and keeps the others (Reference)', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit 1\n@b emit 2', registry);
    await interpreter.ready;
    await interpreter.updateCode('@a emit 1');
    expect(values(interpreter, 'a', 'b')).toEqual(['1', undefined]);
    expect(interpreter.variables.has('b')).toBe(false);
    expect(history).toEqual(['emit 1', 'emit 2']);
  });

  it('87: a failed declaration is not retried by an unchanged update, and onFail reports it again', async () => {
    const { registry, history } = checklistRegistry();
    const reports: unknown[] = [];
    const interpreter = new LightSOPLangInterpreter('@x failer', registry, (f) => reports.push(f));
    await interpreter.ready;
    await interpreter.updateCode('@x failer');
    expect(history).toEqual(['failer']);
    expect(reports).toEqual([[{ variable: 'x', reason: 'fail:oops' }], [{ variable: 'x', reason: 'fail:oops' }]]);
  });

  it('88: a canceled declaration runs again on the next update of the same code, then its dependents (Reference)', async () => {
    let ready = false;
    const { registry, history } = checklistRegistry({
      mode: (_p, r) => (ready ? r.success('ready') : r.cancel('not ready')),
      task: ({ args }, r) => r.success(`ran with ${String(args[0])}`),
    });
    const code = '@mode mode initial\n@job task $mode payload';
    const interpreter = new LightSOPLangInterpreter(code, registry);
    await interpreter.ready;
    expect(interpreter.getVarValue('job')).toBe('canceled:because command mode canceled (not ready) via mode');
    ready = true;
    void interpreter.updateCode(code); // settles through interpreter.ready, awaited next
    await interpreter.ready;
    expect(values(interpreter, 'mode', 'job')).toEqual(['ready', 'ran with ready']);
    expect(history).toEqual(['mode initial', 'mode initial', 'task ready payload']);
  });

  it('89, 90: introducing a cancel cancels dependents; replacing it restores them (Reference)', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@a emit x\n@b combine $a tail', registry);
    await interpreter.ready;
    history.length = 0;
    await interpreter.updateCode('@a canceler x\n@b combine $a tail');
    expect(history).toEqual(['canceler x']);
    expect(interpreter.getVarValue('b')).toBe('canceled:because command canceler canceled (nope) via a');
    await interpreter.updateCode('@a emit y\n@b combine $a tail');
    expect(values(interpreter, 'a', 'b')).toEqual(['y', 'y+tail']);
  });

  it('91: final_answer, cannot_complete and lastAnswer run again on every update, with their dependents', async () => {
    const { registry, history } = checklistRegistry({
      final_answer: ({ args }, r) => r.success(args[0]),
      cannot_complete: ({ args }, r) => r.fail(args[0]),
    });
    const code = '@a emit x\n@f final_answer $a\n@n cannot_complete why\n@lastAnswer emit done\n@after combine $f $lastAnswer';
    const interpreter = new LightSOPLangInterpreter(code, registry);
    await interpreter.ready;
    history.length = 0;
    await interpreter.updateCode(code);
    expect(history.sort()).toEqual(['cannot_complete why', 'combine x done', 'emit done', 'final_answer x']);
  });

  it('92: a declaration that returned no response is retried by the next update (Reference)', async () => {
    let mode = 0;
    const registry = createRegistry(async ({ command }, response) => {
      if (command === 'noop') return response.success('noop');
      if (mode === 0) {
        mode = 1;
        return null;
      }
      return response.success('ok');
    }, [{ name: 'noop', description: 'No-op' }, { name: 'task', description: 'Task with retry' }]);
    const code = '@ready noop token\n@task task $ready';
    const interpreter = new LightSOPLangInterpreter(code, registry);
    await interpreter.ready;
    expect(interpreter.getVarValue('task')).toBe('undefined:command returned no response');
    void interpreter.updateCode(code); // settles through interpreter.ready, awaited next
    await interpreter.ready;
    expect(interpreter.getVarValue('task')).toBe('ok');
  });

  it('93: a dependency given a newer success with the same text makes its dependents run again (Reference)', async () => {
    const seen: string[] = [];
    let transformCalls = 0;
    const { registry, history } = checklistRegistry({
      transform: ({ args, variableState }, r) => {
        seen.push(String(variableState!.value.data));
        transformCalls += 1;
        return transformCalls >= 2 ? r.cancel('maintenance window') : r.success(args.join('|'));
      },
      wrap: ({ args }, r) => r.success(`[${args.join(',')}]`),
    });
    const code = '@source emit base\n@middle transform $source extra\n@final wrap $middle tail';
    const interpreter = new LightSOPLangInterpreter(code, registry);
    await interpreter.ready;
    expect(values(interpreter, 'middle', 'final')).toEqual(['base|extra', '[base|extra,tail]']);
    interpreter.variables.get('source')!.value = createSuccessValue('base', 'test');
    await interpreter.updateCode(code);
    expect(interpreter.getVarValue('middle')).toBe('canceled:command transform canceled (maintenance window)');
    expect(interpreter.getVarValue('final')).toBe('canceled:because command transform canceled (maintenance window) via middle');
    expect(seen).toEqual(['waiting for source', 'stale dependency']);
    expect(history.filter((h) => h.startsWith('transform'))).toHaveLength(2);
  });
});

describe('input', () => {
  it('94: $input is the supplied input (Reference)', async () => {
    const { registry, history } = checklistRegistry({ echo: ({ args }, r) => r.success(args[0]) });
    const interpreter = new LightSOPLangInterpreter('@result echo $input', registry, 'payload-value');
    await interpreter.ready;
    expect(interpreter.getVarValue('result')).toBe('payload-value');
    expect(history).toEqual(['echo payload-value']);
  });

  it('95 (Q7): a declared @input takes the supplied input and its command does not run', async () => {
    const { registry, history } = checklistRegistry();
    const interpreter = new LightSOPLangInterpreter('@input emit declared\n@r combine $input', registry, 'supplied');
    await interpreter.ready;
    expect(values(interpreter, 'input', 'r')).toEqual(['supplied', 'supplied']);
    expect(history).toEqual(['combine supplied']);
  });
});

describe('auto-cancel', () => {
  it('96, 97: off by default; enableAutoCancel turns matching output into a cancellation (Reference)', async () => {
    const { registry } = checklistRegistry({ produce: (_p, r) => r.success('Canceled: maintenance window') });
    const interpreter = new LightSOPLangInterpreter('@result produce value', registry);
    await interpreter.ready;
    expect(interpreter.getVarValue('result')).toBe('Canceled: maintenance window');
    interpreter.enableAutoCancel(true);
    void interpreter.updateCode('@result produce value2'); // settles through interpreter.ready, awaited next
    await interpreter.ready;
    expect(interpreter.getVarValue('result')).toBe('canceled:command produce canceled (maintenance window)');
  });

  it('98: a structured cancel answer cancels, and the next update of the same code that succeeds gives done (Reference)', async () => {
    let mode = 0;
    const registry = createRegistry(async ({ command }, response) => {
      if (command === 'task') {
        if (mode === 0) {
          mode = 1;
          return response.success({ status: 'cancel', reason: 'quota exceeded' });
        }
        return response.success('done');
      }
      return response.success('noop');
    }, [{ name: 'task', description: 'Perform task' }]);
    const code = '@job task start';
    const interpreter = new LightSOPLangInterpreter(code, registry, { executionMonitor: new DefaultExecutionMonitor({ failureLimit: 50 }) });
    interpreter.enableAutoCancel(true);
    await interpreter.ready;
    expect(interpreter.getVarValue('job')).toBe('canceled:command task canceled (quota exceeded)');
    void interpreter.updateCode(code); // settles through interpreter.ready, awaited next
    await interpreter.ready;
    expect(interpreter.getVarValue('job')).toBe('done');
  });

  it('99, 100: the built-in heuristic (Reference, Q17 kept)', () => {
    expect(cancelEuristic('Cancel: maintenance window')!.reason).toBe('maintenance window');
    expect(cancelEuristic({ status: 'cancelled', reason: 'quota exceeded' })!.reason).toBe('quota exceeded');
    expect(cancelEuristic('all good')).toBeNull();
    for (const text of ['Cancellation requested', 'stopped', 'halting']) expect(cancelEuristic(text)).toBeNull();
    expect(cancelEuristic('Stop now')!.reason).toBe('Stop now');
    expect(cancelEuristic('The order was not canceled')!.reason).toBe('The order was not canceled');
  });

  it('101: auto-cancel applies to assign and never to fail', async () => {
    const { registry } = checklistRegistry({ refuse: (_p, r) => r.fail('Canceled: by policy') });
    const interpreter = new LightSOPLangInterpreter('@a assign "Cancel: quota"\n@b refuse', registry, { autoCancel: true });
    await interpreter.ready;
    expect(values(interpreter, 'a', 'b')).toEqual(['canceled:command assign canceled (quota)', 'fail:Canceled: by policy']);
  });
});
