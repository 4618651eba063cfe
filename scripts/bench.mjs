// `npm run bench`: runs every benchmark in bench/ (each a Node script against the built
// bundles), one after the other, so they do not disturb each other. Figures are printed as
// ratios against baselines measured in the same run; nothing here asserts timings.
// Usage: npm run bench [-- NAME...]   (NAME selects bench/NAME.mjs: lint, parse, lsp, startup,
// runtime, distributed). The rows of issue 13's table (lines `ROW | ...` of the benchmarks) are
// summed up at the end and kept, with the date of the run, in bench/RESULTS.md: a row measured
// now replaces the same row of an earlier run. LIGHTSOP_REF_DIR names the reference
// implementation (AchillesAgentLib) for the rows measured against it.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const wanted = process.argv.slice(2);
const files = readdirSync(path.join(root, 'bench'))
  .filter((f) => f.endsWith('.mjs') && !f.startsWith('_'))
  .filter((f) => wanted.length === 0 || wanted.includes(f.replace(/\.mjs$/, '')))
  .sort();
for (const name of wanted) {
  if (!files.includes(`${name}.mjs`)) console.error(`no benchmark bench/${name}.mjs`);
}
if (!process.env.LIGHTSOP_REF_DIR) {
  console.log('LIGHTSOP_REF_DIR is not set: the rows measured against the reference implementation (AchillesAgentLib) are skipped.');
}

/** Runs one benchmark, passing its output through; resolves with its exit code and ROW lines. */
function runOne(file) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', path.join(root, 'bench', file)], { stdio: ['ignore', 'pipe', 'inherit'], cwd: root });
    const rows = [];
    let pending = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) if (line.startsWith('ROW | ')) rows.push(line);
    });
    child.on('close', (code) => {
      if (pending.startsWith('ROW | ')) rows.push(pending);
      resolve({ code, rows });
    });
  });
}

let failed = 0;
const collected = [];
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const { code, rows } = await runOne(f);
  if (code !== 0) failed++;
  const bench = f.replace(/\.mjs$/, '');
  for (const line of rows) {
    const [, measure, value, baseline, ratio, goal] = line.split(' | ').map((x) => x.trim());
    collected.push({ measure, value, baseline, ratio, goal, bench });
  }
}

const cell = (x) => String(x ?? '').replace(/\|/g, '\\|');
const tableLine = (r) => `| ${cell(r.measure)} | ${cell(r.value)} | ${cell(r.baseline)} | ${cell(r.ratio)} | ${cell(r.goal)} | \`npm run bench -- ${r.bench}\` | ${r.date} |`;
if (collected.length > 0) {
  console.log('\n=== issue 13 rows (ratio against a baseline measured in the same run) ===');
  for (const r of collected) console.log(`${r.measure}: ${r.value}; baseline ${r.baseline}; ratio ${r.ratio}; goal ${r.goal}`);

  // bench/RESULTS.md keeps the last figure of every row between the markers.
  const file = path.join(root, 'bench', 'RESULTS.md');
  const START = '<!-- rows: written by scripts/bench.mjs -->';
  const END = '<!-- /rows -->';
  const text = existsSync(file) ? readFileSync(file, 'utf8') : `# Benchmark results\n\n${START}\n${END}\n`;
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  if (a >= 0 && b > a) {
    const kept = new Map();
    for (const line of text.slice(a + START.length, b).split('\n')) {
      const m = /^\| (.+?) \| /.exec(line);
      if (m && !line.startsWith('| measure |') && !line.startsWith('|---')) kept.set(m[1], line);
    }
    const date = new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
    for (const r of collected) kept.set(cell(r.measure), tableLine({ ...r, date }));
    const table = ['| measure | value | baseline (same run) | ratio | goal | reproduce | measured |', '|---|---|---|---|---|---|---|', ...kept.values()].join('\n');
    writeFileSync(file, `${text.slice(0, a + START.length)}\n${table}\n${text.slice(b)}`);
    console.log(`\n(bench/RESULTS.md updated: ${collected.length} row${collected.length === 1 ? '' : 's'})`);
  }
}
process.exitCode = failed ? 1 : 0;
