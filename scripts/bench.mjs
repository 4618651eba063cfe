// `npm run bench`: runs every benchmark in bench/ (each a Node script against the built
// bundles), one after the other, so they do not disturb each other. Figures are printed as
// ratios against baselines measured in the same run; nothing here asserts timings.
// Usage: npm run bench [-- NAME...]   (NAME filters bench/NAME.mjs)
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const wanted = process.argv.slice(2);
const files = readdirSync(path.join(root, 'bench'))
  .filter((f) => f.endsWith('.mjs') && !f.startsWith('_'))
  .filter((f) => wanted.length === 0 || wanted.includes(f.replace(/\.mjs$/, '')))
  .sort();
let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f} ===`);
  const res = spawnSync(process.execPath, ['--expose-gc', path.join(root, 'bench', f)], { stdio: 'inherit', cwd: root });
  if (res.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
