// The extension host reads lightsop.config.json synchronously before Run Plan and Debug Plan: a
// hostile repository's FIFO, device or huge file there must not hang it or exhaust its memory.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { readConfigFileSync } from '../../extension/src/config-file';
import { tempTree } from '../helpers/cli';

describe('the extension reads lightsop.config.json safely', () => {
  it('a FIFO named lightsop.config.json is refused at once instead of blocking the extension host', () => {
    const dir = tempTree({});
    const file = path.join(dir, 'lightsop.config.json');
    execFileSync('mkfifo', [file]);
    const read = readConfigFileSync(file);
    expect(read.config).toBeNull();
    expect(read.problems.join('\n')).toMatch(/not a regular file/);
  });

  it('a config above 8 MiB is refused; a good one is parsed with its problems', () => {
    const dir = tempTree({});
    const big = path.join(dir, 'big.json');
    writeFileSync(big, `{"plans": ["${'x'.repeat(9 * 1024 * 1024)}"]}`);
    expect(readConfigFileSync(big).config).toBeNull();
    expect(readConfigFileSync(big).problems.join('\n')).toMatch(/MiB/);
    const good = path.join(dir, 'lightsop.config.json');
    writeFileSync(good, '{ "skills": "./skills.json", "plans": 5 }');
    const read = readConfigFileSync(good);
    expect(read.problems.length).toBe(1);
  });
});
