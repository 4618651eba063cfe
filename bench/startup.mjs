// Whole-process startup of the built CLI per subcommand (issue 13 item 3), each as a ratio to
// `node -e 0` measured in the same run, interleaved so that load on the machine hits both alike.
// Goal: `lightsop lint` of a one-line plan <= 1.3x `node -e 0`. A plain run is also measured with
// traces on (OTEL_EXPORTER_OTLP_ENDPOINT pointing at a receiver started here, issue 15 item 5), as a
// ratio to the same run without them: OpenTelemetry loads only in that case, so the other rows must
// not move when tracing changes. Figures are the median and the minimum of RUNS runs
// (LIGHTSOP_BENCH_RUNS, default 20); nothing is asserted.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
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

// The OTLP receiver of the traced run: it answers every export (the child process must not wait
// on it), so the spawns below are asynchronous and leave this event loop free to serve it.
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${receiver.address().port}`;

const runArgs = [bin, 'run', 'run.sop', '--skills', 'skills.mjs'];
const cases = [
  { name: 'node -e 0 (baseline)', args: ['-e', '0'], baseline: true },
  { name: 'lightsop --version', args: [bin, '--version'] },
  { name: 'lightsop lint one.sop', args: [bin, 'lint', 'one.sop'], goal: 1.3 },
  { name: 'lightsop fmt --check one.sop', args: [bin, 'fmt', '--check', 'one.sop'] },
  { name: 'lightsop graph one.sop', args: [bin, 'graph', 'one.sop'] },
  { name: 'lightsop run run.sop --skills skills.mjs', args: runArgs, untraced: true },
  { name: 'lightsop run run.sop --skills skills.mjs (traces on)', args: runArgs, env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, traced: true },
  { name: 'lightsop chat --help', args: [bin, 'chat', '--help'] },
];

// No OTEL_* variable of the caller's reaches the children: only the traced case turns traces on.
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_'))), NO_COLOR: '1' };
function once(c) {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const child = spawn(process.execPath, c.args, { cwd: dir, env: { ...env, ...c.env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      if (code === 0) resolve(ms);
      else reject(new Error(`${c.name} exited ${code}: ${stderr}`));
    });
  });
}

try {
  for (const c of cases) {
    c.samples = [];
    await once(c); // warm the file cache
  }
  for (let i = 0; i < RUNS; i++) for (const c of cases) c.samples.push(await once(c));
} finally {
  receiver.close();
  rmSync(dir, { recursive: true, force: true });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const min = (xs) => xs.reduce((a, b) => Math.min(a, b), Infinity);
const base = cases[0];
const baseMedian = median(base.samples);
const baseMin = min(base.samples);
const rows = cases.map((c) => ({
  command: c.name,
  'median ms': median(c.samples).toFixed(0),
  'min ms': min(c.samples).toFixed(0),
  'x node -e 0 (median)': (median(c.samples) / baseMedian).toFixed(2),
  'x node -e 0 (min)': (min(c.samples) / baseMin).toFixed(2),
  goal: c.goal ? `<= ${c.goal}x` : '',
}));
console.log(`Whole-process startup, ${RUNS} interleaved runs each (a one-line plan).`);
console.table(rows);
const lint = cases.find((c) => c.goal);
row('lightsop lint of a one-line plan, whole process, vs node -e 0', {
  value: `${median(lint.samples).toFixed(0)} ms`,
  baseline: `node -e 0 ${baseMedian.toFixed(0)} ms`,
  ratio: `${(median(lint.samples) / baseMedian).toFixed(2)}x (min/min ${(min(lint.samples) / baseMin).toFixed(2)}x)`,
  goal: '<= 1.3x',
});
const untraced = cases.find((c) => c.untraced);
const traced = cases.find((c) => c.traced);
row('lightsop run with traces on (local OTLP receiver), whole process, vs the same run without', {
  value: `${median(traced.samples).toFixed(0)} ms`,
  baseline: `untraced run ${median(untraced.samples).toFixed(0)} ms`,
  ratio: `${(median(traced.samples) / median(untraced.samples)).toFixed(2)}x (min/min ${(min(traced.samples) / min(untraced.samples)).toFixed(2)}x)`,
  goal: '-',
});
