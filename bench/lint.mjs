// `lightsop lint` of a generated 100k-declaration random DAG, whole process (issue 13, first
// row), against the reference implementation parsing the same file in a whole process of its own
// (AchillesAgentLib's lightSOPLang/parser.mjs from LIGHTSOP_REF_DIR), runs interleaved so that
// load on the machine hits both alike. Goal: <= 0.5x the reference. Without LIGHTSOP_REF_DIR the
// row says so and only our own time is printed. Nothing is asserted.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dagPlan } from './_plans.mjs';
import { referenceParser, row, skippedRow } from './_rows.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'packages/cli/bin/lightsop.js');
if (!existsSync(path.join(root, 'packages/cli/dist/main.js'))) {
  console.error('missing packages/cli/dist/main.js: run `npm run build` first');
  process.exit(1);
}
const N = 100_000;
const RUNS = Number(process.env.LIGHTSOP_BENCH_RUNS) || 5;
const dir = mkdtempSync(path.join(tmpdir(), 'lightsop-lint-bench-'));
const plan = path.join(dir, 'dag.sop');
const text = dagPlan(N);
writeFileSync(plan, text);
const { parser, file: refFile, why } = await referenceParser();

const ours = { name: 'lightsop lint dag.sop', args: [bin, 'lint', plan], samples: [] };
const reference = refFile && parser
  ? {
      name: 'reference parseCode(dag.sop)',
      args: ['--input-type=module', '-e', `import { readFileSync } from 'node:fs'; import { parseCode } from ${JSON.stringify(pathToFileURL(refFile).href)}; const d = parseCode(readFileSync(${JSON.stringify(plan)}, 'utf8')); if (d.size !== ${N}) process.exit(9);`],
      samples: [],
    }
  : null;
const cases = reference ? [ours, reference] : [ours];

function once(c) {
  const t = process.hrtime.bigint();
  const res = spawnSync(process.execPath, c.args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 26 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  // lint exits 1 only for errors; the plan has none (unused-variable warnings exit 0).
  if (res.status !== 0) throw new Error(`${c.name} exited ${res.status}: ${String(res.stderr).slice(0, 500)}`);
  return ms;
}
for (const c of cases) once(c); // warm the file cache
for (let i = 0; i < RUNS; i++) for (const c of cases) c.samples.push(once(c));
rmSync(dir, { recursive: true, force: true });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`plan: ${N.toLocaleString('en')} declarations, random DAG, ${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB; ${RUNS} interleaved runs each`);
console.table(cases.map((c) => ({ process: c.name, 'median ms': median(c.samples).toFixed(0), 'min ms': Math.min(...c.samples).toFixed(0) })));
const measure = `lightsop lint, ${N / 1000}k-declaration random DAG, whole process, vs the reference parsing it`;
if (reference) {
  const r = median(ours.samples) / median(reference.samples);
  row(measure, { value: `${(median(ours.samples) / 1000).toFixed(2)} s`, baseline: `reference ${(median(reference.samples) / 1000).toFixed(2)} s`, ratio: `${r.toFixed(2)}x`, goal: '<= 0.5x' });
} else {
  console.log(`reference: ${why}; skipped`);
  skippedRow(measure, `${why} (lightsop lint: ${(median(ours.samples) / 1000).toFixed(2)} s)`, '<= 0.5x');
}
