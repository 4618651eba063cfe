// Parse+validate throughput of @lightsop/core on generated plans (issue 2), as MB/s and
// declarations/s, each next to a baseline measured in the same run: splitting the text into lines
// (what any line-based tool must at least do). Goals: >= 30 MB/s on short-line plans at 100k
// declarations; throughput at 100k >= 80% of 1k; memory per parsed declaration < 1 KB.
import { analyzePlan, parsePlan } from '../packages/core/dist/index.js';
import { chainPlan, dagPlan, textPlan } from './_plans.mjs';

function time(fn, minMs = 400) {
  fn(); // warm-up
  const samples = [];
  const start = performance.now();
  while (performance.now() - start < minMs || samples.length < 3) {
    const t = performance.now();
    fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

const shapes = { chain: chainPlan, dag: dagPlan, text: textPlan };
const rows = [];
const throughput = {};
for (const [shape, make] of Object.entries(shapes)) {
  for (const n of [1000, 10000, 100000]) {
    const text = make(n);
    const mb = Buffer.byteLength(text) / 1e6;
    const baseline = time(() => text.split(/\r?\n/).length);
    const ms = time(() => {
      const a = analyzePlan(text);
      if (a.plan.declarations.length !== n) throw new Error('wrong declaration count');
    });
    throughput[`${shape}-${n}`] = mb / (ms / 1000);
    rows.push({ shape, declarations: n, MB: mb.toFixed(2), 'parse+validate ms': ms.toFixed(1), 'MB/s': (mb / (ms / 1000)).toFixed(1), 'decl/s': Math.round(n / (ms / 1000)).toLocaleString('en'), 'x baseline (split)': (ms / baseline).toFixed(1) });
  }
}
console.table(rows);
for (const shape of Object.keys(shapes)) {
  console.log(`${shape}: throughput at 100k / at 1k = ${(throughput[`${shape}-100000`] / throughput[`${shape}-1000`]).toFixed(2)} (goal >= 0.80)`);
}

// Memory per parsed declaration: retained heap after parsing 100k declarations (the source text
// excluded), for the AST alone and for the whole analysis (AST, diagnostics, symbol table).
for (const [shape, make] of [['chain', chainPlan], ['dag', dagPlan]]) {
  const text = make(100000);
  for (const [what, fn] of [['AST (parsePlan)', parsePlan], ['analysis (analyzePlan)', analyzePlan]]) {
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    let kept = fn(text);
    global.gc?.();
    const after = process.memoryUsage().heapUsed;
    console.log(`memory per declaration, ${shape}, ${what}: ${((after - before) / kept.plan.declarations.length).toFixed(0)} bytes (goal < 1024)${global.gc ? '' : ' (run with --expose-gc for an exact figure)'}`);
    kept = null;
  }
}
