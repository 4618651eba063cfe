// The rows of issue 13's table, printed in one format that `scripts/bench.mjs` collects into a
// summary and into bench/RESULTS.md:
//   ROW | measure | value | baseline (measured in the same run) | ratio | goal
// A row that cannot be measured (no reference given) says why instead of a value.
export function row(measure, { value, baseline, ratio, goal }) {
  console.log(`ROW | ${measure} | ${value} | ${baseline} | ${ratio} | ${goal}`);
}

export function skippedRow(measure, why, goal) {
  console.log(`ROW | ${measure} | skipped: ${why} | - | - | ${goal}`);
}

/**
 * The reference implementation's parser (AchillesAgentLib's lightSOPLang/parser.mjs) from the
 * folder named by LIGHTSOP_REF_DIR (the library's root or its lightSOPLang folder), or null with
 * the reason when it is not given or not there.
 */
export async function referenceParser() {
  const dir = process.env.LIGHTSOP_REF_DIR;
  if (!dir) return { parser: null, file: null, why: 'LIGHTSOP_REF_DIR is not set (the folder of AchillesAgentLib or its lightSOPLang/)' };
  const { existsSync } = await import('node:fs');
  const path = await import('node:path');
  const { pathToFileURL } = await import('node:url');
  for (const file of [path.join(dir, 'lightSOPLang', 'parser.mjs'), path.join(dir, 'parser.mjs')]) {
    if (existsSync(file)) {
      const mod = await import(pathToFileURL(file).href);
      if (typeof mod.parseCode === 'function') return { parser: mod.parseCode, file, why: null };
    }
  }
  return { parser: null, file: null, why: `no lightSOPLang/parser.mjs exporting parseCode under LIGHTSOP_REF_DIR=${dir}` };
}
