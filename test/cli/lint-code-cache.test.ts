/**
 * The lint bundle's V8 code cache (bin/lightsop.js): kept in a folder private to the user under
 * the temporary directory, never used when that folder is open to others, replaced when it is
 * corrupt, and off with LIGHTSOP_CODE_CACHE=0. Whatever the cache holds, lint says the same.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, repoRoot } from '../helpers/cli';

const BIN = path.join(repoRoot, 'packages/cli/bin/lightsop.js');
const posix = typeof process.getuid === 'function';

function lint(cwd: string, temp: string, env: Record<string, string> = {}) {
  const res = spawnSync(process.execPath, [BIN, 'lint', 'plan.sop'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', TMPDIR: temp, TMP: temp, TEMP: temp, ...env },
    timeout: 60_000,
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

describe.runIf(posix)('the lint code cache', () => {
  let dir: string;
  let expected: ReturnType<typeof lint>;
  beforeAll(() => {
    ensureBuilt();
    dir = mkdtempSync(path.join(tmpdir(), 'lightsop-code-cache-test-'));
    writeFileSync(path.join(dir, 'plan.sop'), '@a assign hello\n@b echo $nope\n');
    expected = lint(dir, mkdtempSync(path.join(tmpdir(), 'lightsop-no-cache-')), { LIGHTSOP_CODE_CACHE: '0' });
    expect(expected.code).toBe(1);
    expect(expected.stdout).toContain("'nope'");
  });

  it('is written to a private folder and used on the next run', () => {
    const temp = mkdtempSync(path.join(tmpdir(), 'lightsop-cache-'));
    expect(lint(dir, temp)).toEqual(expected);
    const cacheDir = path.join(temp, `lightsop-code-cache-${process.getuid!()}`);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    const files = readdirSync(cacheDir);
    expect(files).toHaveLength(1);
    expect(statSync(path.join(cacheDir, files[0]!)).mode & 0o777).toBe(0o600);
    expect(lint(dir, temp)).toEqual(expected);
    expect(readdirSync(cacheDir)).toEqual(files);
  }, 60_000);

  it('a corrupt cache is ignored and replaced', () => {
    const temp = mkdtempSync(path.join(tmpdir(), 'lightsop-cache-'));
    expect(lint(dir, temp)).toEqual(expected);
    const cacheDir = path.join(temp, `lightsop-code-cache-${process.getuid!()}`);
    const file = path.join(cacheDir, readdirSync(cacheDir)[0]!);
    writeFileSync(file, 'not compiled code at all');
    expect(lint(dir, temp)).toEqual(expected);
    expect(statSync(file).size).toBeGreaterThan(1000);
  }, 60_000);

  it('a folder others may write to is not used, and LIGHTSOP_CODE_CACHE=0 writes nothing', () => {
    const temp = mkdtempSync(path.join(tmpdir(), 'lightsop-cache-'));
    const cacheDir = path.join(temp, `lightsop-code-cache-${process.getuid!()}`);
    mkdirSync(cacheDir);
    chmodSync(cacheDir, 0o777);
    expect(lint(dir, temp)).toEqual(expected);
    expect(readdirSync(cacheDir)).toEqual([]);
    const off = mkdtempSync(path.join(tmpdir(), 'lightsop-cache-'));
    expect(lint(dir, off, { LIGHTSOP_CODE_CACHE: '0' })).toEqual(expected);
    expect(existsSync(path.join(off, `lightsop-code-cache-${process.getuid!()}`))).toBe(false);
  }, 60_000);
});
