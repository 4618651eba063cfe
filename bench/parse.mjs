// Parse+validate throughput of @lightsop/core on generated plans (issue 2), as MB/s and
// declarations/s, each next to a baseline measured in the same run: splitting the text into lines
// (what any line-based tool must at least do). Goals: >= 30 MB/s on short-line plans at 100k
// declarations; throughput at 100k >= 80% of 1k; memory per parsed declaration < 1 KB.
import { analyzePlan, parsePlan } from '../packages/core/dist/index.js';
import { chainPlan, dagPlan, textPlan } from './_plans.mjs';
import { referenceParser, row } from './_rows.mjs';

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
// excluded), for the AST alone and for the whole analysis (AST, diagnostics, symbol table); issue
// 13's row is the AST of the random DAG (goal <= 500 B), next to the reference's parse of the same
// text (LIGHTSOP_REF_DIR) or, without it, the source text's own bytes per declaration.
// The compact tree keeps its arrays in ArrayBuffers, which live outside the V8 heap: they count too.
function retained() {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
function retainedPerDeclaration(fn, text, count) {
  global.gc?.();
  const before = retained();
  let kept = fn(text);
  global.gc?.();
  const after = retained();
  const n = count(kept);
  kept = null;
  return (after - before) / n;
}
const perDeclaration = {};
for (const [shape, make] of [['chain', chainPlan], ['dag', dagPlan]]) {
  const text = make(100000);
  for (const [what, fn] of [['AST (parsePlan)', parsePlan], ['analysis (analyzePlan)', analyzePlan]]) {
    const bytes = retainedPerDeclaration(fn, text, (kept) => kept.plan.declarations.length);
    perDeclaration[`${shape} ${what}`] = bytes;
    console.log(`memory per declaration, ${shape}, ${what}: ${bytes.toFixed(0)} bytes (goal <= 500 for the AST)${global.gc ? '' : ' (run with --expose-gc for an exact figure)'}`);
  }
}
{
  const text = dagPlan(100000);
  const ours = perDeclaration['dag AST (parsePlan)'];
  const { parser, why } = await referenceParser();
  const measure = 'memory per declaration (parsed), 100k random DAG';
  if (parser) {
    const ref = retainedPerDeclaration(parser, text, (kept) => kept.size);
    console.log(`memory per declaration, dag, the reference's parseCode: ${ref.toFixed(0)} bytes`);
    row(measure, { value: `${ours.toFixed(0)} B`, baseline: `reference parseCode ${ref.toFixed(0)} B`, ratio: `${(ours / ref).toFixed(2)}x`, goal: '<= 500 B' });
  } else {
    const source = Buffer.byteLength(text) / 100000;
    console.log(`reference: ${why}; the baseline is the source text's bytes per declaration`);
    row(measure, { value: `${ours.toFixed(0)} B`, baseline: `source text ${source.toFixed(0)} B`, ratio: `${(ours / source).toFixed(2)}x`, goal: '<= 500 B' });
  }
}
