// Runtime benchmarks (issue 3), against the built @lightsop/runtime, printed as ratios to
// baselines measured in the same run:
// - per-command overhead with instant commands, for chains, random DAGs and fan-outs of 1k, 10k
//   and 100k declarations (goal: <= 5 us, flat; a 100k plan of any shape in < 2 s); the baseline
//   is calling the same command N times in a plain loop;
// - makespan / critical path for random DAGs of 1k declarations whose commands take 1-20 ms
//   (goal: <= 1.10); the critical path is computed from the drawn durations;
// - re-running after a one-line edit of a 10k plan (time, and how many commands re-ran).
import { Interpreter, UnlimitedExecutionMonitor } from '../packages/runtime/dist/index.js';
import { chainPlan, dagPlan, fanOutPlan, rng } from './_plans.mjs';

const instant = {
  listCommands: () => [{ name: 'emit', description: '' }, { name: 'step', description: '' }],
  async executeCommand(p, r) {
    return r.success(p.variable);
  },
};

async function directBaseline(n) {
  const responder = { success: (d) => ({ status: 'success', data: d, raw: 'x' }) };
  const t = performance.now();
  for (let i = 0; i < n; i++) await instant.executeCommand({ variable: 'v', args: [] }, responder);
  return performance.now() - t;
}

async function bestBaseline(n) {
  let best = Infinity;
  for (let k = 0; k < 3; k++) best = Math.min(best, await directBaseline(n));
  return best;
}

async function runOnce(text, registry = instant) {
  const interpreter = new Interpreter({ registry, executionMonitor: new UnlimitedExecutionMonitor() });
  let t = performance.now();
  const result = await interpreter.updateCode(text);
  const ms = performance.now() - t;
  // The same text again runs nothing: what remains is parsing, validation, applying the update
  // and the invalidation pass, so the difference is the execution phase.
  t = performance.now();
  await interpreter.updateCode(text);
  const staticMs = performance.now() - t;
  return { ms, staticMs, commands: result.commands.length, interpreter };
}

const rows = [];
for (const [shape, make] of [['chain', chainPlan], ['dag', dagPlan], ['fan-out', fanOutPlan]]) {
  for (const n of [1000, 10000, 100000]) {
    const text = make(n);
    await runOnce(text); // warm-up
    // Best of a few runs: the figures are about the code, not about other load on the machine.
    let ms = Infinity;
    let staticMs = Infinity;
    let commands = 0;
    for (let k = 0; k < (n >= 100000 ? 2 : 5); k++) {
      const r = await runOnce(text);
      ms = Math.min(ms, r.ms);
      staticMs = Math.min(staticMs, r.staticMs);
      commands = r.commands;
    }
    if (commands !== n) throw new Error(`${shape} ${n}: ran ${commands} commands`);
    const base = await bestBaseline(n);
    const execMs = Math.max(0, ms - staticMs);
    rows.push({
      shape,
      declarations: n,
      'whole run ms': ms.toFixed(0),
      'parse+validate+apply ms': staticMs.toFixed(0),
      'execution us/command': ((execMs * 1000) / n).toFixed(2),
      'baseline us/call': ((base * 1000) / n).toFixed(2),
      'overhead us/command': (((execMs - base) * 1000) / n).toFixed(2),
    });
  }
}
console.log('Instant commands (goals: scheduling overhead <= 5 us/command, flat; a whole 100k run in < 2000 ms).');
console.log('overhead = execution phase per command minus the baseline of calling the command directly.');
console.table(rows);

// Makespan vs critical path, commands taking 1-20 ms.
{
  const n = 1000;
  const text = dagPlan(n, 11);
  const r = rng(99);
  const duration = new Map();
  for (let i = 0; i < n; i++) duration.set(`v${i}`, 1 + Math.floor(r() * 20));
  const deps = new Map();
  for (const line of text.trim().split('\n')) {
    const [name, , ...rest] = line.split(' ');
    deps.set(name.slice(1), rest.filter((t) => t.startsWith('$')).map((t) => t.slice(1)));
  }
  const finish = new Map();
  let critical = 0;
  for (let i = 0; i < n; i++) {
    const name = `v${i}`;
    const start = Math.max(0, ...deps.get(name).map((d) => finish.get(d)));
    finish.set(name, start + duration.get(name));
    critical = Math.max(critical, finish.get(name));
  }
  const timed = {
    listCommands: instant.listCommands,
    executeCommand: (p, res) => new Promise((resolve) => setTimeout(() => resolve(res.success(p.variable)), duration.get(p.variable))),
  };
  const { ms } = await runOnce(text, timed);
  // (runOnce's second, no-op update of the same plan is not part of the makespan.)
  console.log(`Random DAG, ${n} declarations, commands of 1-20 ms: makespan ${ms.toFixed(0)} ms, critical path ${critical} ms, ratio ${(ms / critical).toFixed(3)} (goal <= 1.10)`);
}

// Incremental: a one-line edit of a 10k plan.
{
  const lines = chainPlan(5000).trim().split('\n').concat(fanOutPlan(5000).trim().split('\n').map((l) => l.replace(/\bv(\d+)/g, 'f$1')));
  const text = lines.join('\n');
  const interpreter = new Interpreter({ registry: instant, executionMonitor: new UnlimitedExecutionMonitor() });
  await interpreter.updateCode(text);
  const edited = lines.slice();
  edited[4000] = edited[4000].replace(/x4000$/, 'edited');
  const t = performance.now();
  const result = await interpreter.updateCode(edited.join('\n'));
  const editMs = performance.now() - t;
  const full = await runOnce(text);
  console.log(`One-line edit of a 10k plan: ${editMs.toFixed(0)} ms, ${result.commands.length} commands re-ran (the edited step and its 999 descendants); a full run of the same plan takes ${full.ms.toFixed(0)} ms`);
}
