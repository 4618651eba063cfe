// Walks test/fixtures/<code>/<case>.sop and compares diagnostics with <case>.expected.json
// (code, severity, 1-based positions). UPDATE_FIXTURES=1 writes missing or changed expectations
// for review in the diff. A folder's skills.json, when present, is the skills description.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzePlan, parseSkillsJson } from '@lightsop/core';

const root = path.resolve(__dirname, '../fixtures');
const update = process.env.UPDATE_FIXTURES === '1';
/** Folders of test/fixtures that hold other fixtures than plans by diagnostic code. */
const OTHER_FIXTURES = new Set(['junit']);

for (const folder of readdirSync(root).sort()) {
  if (OTHER_FIXTURES.has(folder)) continue;
  const dir = path.join(root, folder);
  const skillsFile = path.join(dir, 'skills.json');
  const skills = existsSync(skillsFile) ? parseSkillsJson(readFileSync(skillsFile, 'utf8')) : null;
  describe(folder, () => {
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.sop')).sort()) {
      it(file, () => {
        const source = readFileSync(path.join(dir, file), 'utf8').replace(/^\uFEFF/, '');
        const actual = analyzePlan(source, { skills }).diagnostics.map((d) => ({
          code: d.code, severity: d.severity, line: d.range.line, column: d.range.column, endLine: d.range.endLine, endColumn: d.range.endColumn,
        }));
        const expectedFile = path.join(dir, file.replace(/\.sop$/, '.expected.json'));
        if (update && (!existsSync(expectedFile) || readFileSync(expectedFile, 'utf8') !== JSON.stringify(actual, null, 2) + '\n')) {
          writeFileSync(expectedFile, JSON.stringify(actual, null, 2) + '\n');
        }
        expect(existsSync(expectedFile), `${expectedFile} is missing; run with UPDATE_FIXTURES=1`).toBe(true);
        expect(actual).toEqual(JSON.parse(readFileSync(expectedFile, 'utf8')));
        if (folder === 'valid') expect(actual.filter((d) => d.severity === 'error')).toEqual([]);
        else expect(actual.some((d) => d.code === folder)).toBe(true);
      });
    }
  });
}
