// Whole-process startup of the built CLI per subcommand (issue 13 item 3), each as a ratio to
// `node -e 0` measured in the same run, interleaved so that load on the machine hits both alike.
// Goal: `lightsop lint` of a one-line plan <= 1.3x `node -e 0`. Figures are the median and the
// minimum of RUNS runs (LIGHTSOP_BENCH_RUNS, default 20); nothing is asserted.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { row } from './_rows.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'packages/cli/bin/lightsop.js');
if (!existsSync(path.join(root, 'packages/cli/dist/main.js'))) {
  console.error('missing packages/cli/dist/main.js: run `npm run build` first');
  process.exit(1);
}
const RUNS = Number(process.env.LIGHTSOP_BENCH_RUNS) || 20;
const dir = mkdtempSync(path.join(tmpdir(), 'lightsop-startup-'));
writeFileSync(path.join(dir, 'one.sop'), '@a assign hello\n');
writeFileSync(path.join(dir, 'skills.mjs'), 'export default { greet: { description: "says hello", run: (args) => "hello " + args.join(" ") } };\n');
writeFileSync(path.join(dir, 'run.sop'), '@a greet world\n');

const cases = [
  { name: 'node -e 0 (baseline)', args: ['-e', '0'], baseline: true },
  { name: 'lightsop --version', args: [bin, '--version'] },
  { name: 'lightsop lint one.sop', args: [bin, 'lint', 'one.sop'], goal: 1.3 },
  { name: 'lightsop fmt --check one.sop', args: [bin, 'fmt', '--check', 'one.sop'] },
  { name: 'lightsop graph one.sop', args: [bin, 'graph', 'one.sop'] },
  { name: 'lightsop run run.sop --skills skills.mjs', args: [bin, 'run', 'run.sop', '--skills', 'skills.mjs'] },
  { name: 'lightsop chat --help', args: [bin, 'chat', '--help'] },
];

const env = { ...process.env, NO_COLOR: '1' };
function once(c) {
  const t = process.hrtime.bigint();
  const res = spawnSync(process.execPath, c.args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (res.status !== 0) {
    throw new Error(`${c.name} exited ${res.status}: ${String(res.stderr)}`);
  }
  return ms;
}
for (const c of cases) {
  c.samples = [];
  once(c); // warm the file cache
}
for (let i = 0; i < RUNS; i++) for (const c of cases) c.samples.push(once(c));
rmSync(dir, { recursive: true, force: true });

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const base = cases[0];
const baseMedian = median(base.samples);
const baseMin = Math.min(...base.samples);
const rows = cases.map((c) => ({
  command: c.name,
  'median ms': median(c.samples).toFixed(0),
  'min ms': Math.min(...c.samples).toFixed(0),
  'x node -e 0 (median)': (median(c.samples) / baseMedian).toFixed(2),
  'x node -e 0 (min)': (Math.min(...c.samples) / baseMin).toFixed(2),
  goal: c.goal ? `<= ${c.goal}x` : '',
}));
console.log(`Whole-process startup, ${RUNS} interleaved runs each (a one-line plan).`);
console.table(rows);
const lint = cases.find((c) => c.goal);
row('lightsop lint of a one-line plan, whole process, vs node -e 0', {
  value: `${median(lint.samples).toFixed(0)} ms`,
  baseline: `node -e 0 ${baseMedian.toFixed(0)} ms`,
  ratio: `${(median(lint.samples) / baseMedian).toFixed(2)}x (min/min ${(Math.min(...lint.samples) / baseMin).toFixed(2)}x)`,
  goal: '<= 1.3x',
});
