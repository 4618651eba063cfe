// Files the CLI must never damage (issue 10, items 6, 7, 9 and 12): encodings, links, modes and
// owners, unreadable files, empty folders; and output into a reader that closes early (item 8).
// Everything runs the built binary, because these are properties of the real process.
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync, chownSync, linkSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, realpathSync, statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, lightsop, repoRoot, tempTree, type CliRun } from '../helpers/cli';

const bin = path.join(repoRoot, 'packages/cli/bin/lightsop.js');
const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

/** Runs the built binary with raw bytes on standard input. */
function lightsopBytes(args: string[], cwd: string, input: Buffer): CliRun {
  const res = spawnSync(process.execPath, [bin, ...args], { cwd, input, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 60000 });
  return { code: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

/**
 * Runs the built binary as a user other than the owner of the test files. Root bypasses
 * permission checks, so a root test process runs the CLI as `nobody` (the folder must let it in).
 */
function lightsopAsOther(args: string[], cwd: string): CliRun {
  const res = spawnSync(process.execPath, [bin, ...args], {
    cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 60000,
    ...(isRoot ? { uid: NOBODY, gid: NOBODY } : {}),
  });
  return { code: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

/** Runs the built binary with a file-size limit of `kib` KiB, so writes past it fail (EFBIG). */
function lightsopWithSizeLimit(args: string[], cwd: string, kib: number): CliRun {
  const res = spawnSync('bash', ['-c', `ulimit -f ${kib} && exec "$0" "$@"`, process.execPath, bin, ...args], {
    cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 60000,
  });
  return { code: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

const bytes = (file: string) => readFileSync(file);

beforeAll(() => ensureBuilt(), 120000);

describe('files that are not UTF-8 (item 6)', () => {
  // `@b emit "日本" caf` is 16 UTF-16 units, so the Latin-1 é is at column 17 of line 2.
  const latin = Buffer.concat([Buffer.from('@a   emit x\n@b emit "日本" caf'), Buffer.from([0xe9]), Buffer.from('\n')]);
  const latinOffset = Buffer.byteLength('@a   emit x\n@b emit "日本" caf');
  const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('@a   emit x\n', 'utf16le')]);
  const utf16be = Buffer.from([0xfe, 0xff, 0x00, 0x40, 0x00, 0x61, 0x00, 0x20, 0x00, 0x20, 0x00, 0x65, 0x00, 0x0a]);
  const utf32le = Buffer.from([0xff, 0xfe, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00]);
  const binary = Buffer.from([0x40, 0x61, 0x20, 0x20, 0x65, 0x6d, 0x69, 0x74, 0x20, 0x78, 0x0a, 0x40, 0x62, 0x00, 0x01, 0x02, 0x0a]);

  function tree(): string {
    const dir = tempTree({ 'ok.sop': '@a   emit x\n' });
    writeFileSync(path.join(dir, 'latin.sop'), latin);
    writeFileSync(path.join(dir, 'utf16le.sop'), utf16le);
    writeFileSync(path.join(dir, 'utf16be.sop'), utf16be);
    writeFileSync(path.join(dir, 'utf32le.sop'), utf32le);
    writeFileSync(path.join(dir, 'binary.sop'), binary);
    return dir;
  }

  it('fmt --write refuses each of them by name, leaves them byte for byte, formats the rest and exits 2', () => {
    const dir = tree();
    const res = lightsop(['fmt', '--write', '.'], { cwd: dir });
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('ok.sop: formatted\n');
    expect(res.stderr).toContain(`lightsop: latin.sop:2:17: not valid UTF-8 (byte 0xE9 at offset ${latinOffset})`);
    expect(res.stderr).toContain('lightsop: utf16le.sop:1:1: encoded as UTF-16 LE (it starts with a byte order mark), not UTF-8');
    expect(res.stderr).toContain('lightsop: utf16be.sop:1:1: encoded as UTF-16 BE (it starts with a byte order mark), not UTF-8');
    expect(res.stderr).toContain('lightsop: utf32le.sop:1:1: encoded as UTF-32 LE (it starts with a byte order mark), not UTF-8');
    expect(res.stderr).toContain('lightsop: binary.sop:2:3: contains a NUL byte (offset 13)');
    expect(res.stderr).not.toMatch(/\n\s+at /);
    expect(bytes(path.join(dir, 'latin.sop'))).toEqual(latin);
    expect(bytes(path.join(dir, 'utf16le.sop'))).toEqual(utf16le);
    expect(bytes(path.join(dir, 'utf16be.sop'))).toEqual(utf16be);
    expect(bytes(path.join(dir, 'utf32le.sop'))).toEqual(utf32le);
    expect(bytes(path.join(dir, 'binary.sop'))).toEqual(binary);
    expect(readFileSync(path.join(dir, 'ok.sop'), 'utf8')).toBe('@a emit x\n');
  });

  it('fmt prints nothing and fmt --check exits 2 for them; standard input is checked too', () => {
    const dir = tree();
    const printed = lightsop(['fmt', 'latin.sop'], { cwd: dir });
    expect(printed.code).toBe(2);
    expect(printed.stdout).toBe('');
    expect(printed.stderr).toBe(`lightsop: latin.sop:2:17: not valid UTF-8 (byte 0xE9 at offset ${latinOffset}); save the file as UTF-8\n`);
    const check = lightsop(['fmt', '--check', 'latin.sop', 'ok.sop'], { cwd: dir });
    expect(check.code).toBe(2);
    expect(check.stdout).toBe('ok.sop: not formatted\n');
    const stdin = lightsopBytes(['fmt', '-'], dir, latin);
    expect(stdin.code).toBe(2);
    expect(stdin.stdout).toBe('');
    expect(stdin.stderr).toContain(`<stdin>:2:17: not valid UTF-8 (byte 0xE9 at offset ${latinOffset})`);
  });

  it('lint reports one located error for each, still lints the other files and exits 2', () => {
    const dir = tree();
    writeFileSync(path.join(dir, 'bad.sop'), '@a emit $zz\n');
    const res = lightsop(['lint', '.', '--format', 'json'], { cwd: dir });
    expect(res.code).toBe(2);
    const out = JSON.parse(res.stdout) as { file: string; diagnostics: { code: string }[] }[];
    expect(out.map((f) => f.file)).toEqual(['bad.sop', 'ok.sop']);
    expect(out[0]!.diagnostics.map((d) => d.code)).toContain('undefined-variable');
    const lines = res.stderr.trimEnd().split('\n');
    expect(lines).toEqual([
      'lightsop: binary.sop:2:3: contains a NUL byte (offset 13): a binary file, or UTF-16 without a byte order mark; save the plan as UTF-8 text',
      `lightsop: latin.sop:2:17: not valid UTF-8 (byte 0xE9 at offset ${latinOffset}); save the file as UTF-8`,
      'lightsop: utf16be.sop:1:1: encoded as UTF-16 BE (it starts with a byte order mark), not UTF-8; save the file as UTF-8',
      'lightsop: utf16le.sop:1:1: encoded as UTF-16 LE (it starts with a byte order mark), not UTF-8; save the file as UTF-8',
      'lightsop: utf32le.sop:1:1: encoded as UTF-32 LE (it starts with a byte order mark), not UTF-8; save the file as UTF-8',
    ]);
    const text = lightsop(['lint', '.'], { cwd: dir });
    expect(text.code).toBe(2);
    expect(text.stdout).toContain("bad.sop:1:9: error: Variable 'zz' is not declared");
  });

  it('run and graph refuse them (exit 3 and 2) without running anything', () => {
    const dir = tree();
    const run = lightsop(['run', 'latin.sop', '--json'], { cwd: dir });
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`lightsop: latin.sop:2:17: not valid UTF-8 (byte 0xE9 at offset ${latinOffset}); save the file as UTF-8\n`);
    const graph = lightsop(['graph', 'utf16le.sop'], { cwd: dir });
    expect(graph.code).toBe(2);
    expect(graph.stdout).toBe('');
    expect(graph.stderr).toContain('utf16le.sop:1:1: encoded as UTF-16 LE');
  });

  it('valid UTF-8 (a UTF-8 BOM, astral characters, a literal U+FFFD, CRLF) is read and kept exactly', () => {
    const text = '\uFEFF@a   emit "é 😀 \uFFFD"\r\n@bb emit $a\r\n';
    const dir = tempTree({ 'u.sop': text });
    const res = lightsop(['fmt', '--write', 'u.sop'], { cwd: dir });
    expect(res.code).toBe(0);
    expect(readFileSync(path.join(dir, 'u.sop'), 'utf8')).toBe('\uFEFF@a  emit "é 😀 \uFFFD"\r\n@bb emit $a\r\n');
    expect(lightsop(['lint', 'u.sop'], { cwd: dir }).code).toBe(0);
  });
});

describe('fmt --write keeps links, modes and owners (item 7)', () => {
  const messy = '@a   emit x\n@bb  emit $a\n';
  const tidy = '@a  emit x\n@bb emit $a\n';

  it('writes through a symbolic link (and a chain of them) to the real file, which stays a link', () => {
    const dir = tempTree({ 'real/plan.sop': messy });
    mkdirSync(path.join(dir, 'links'));
    symlinkSync('../real/plan.sop', path.join(dir, 'links/one.sop'));
    symlinkSync('one.sop', path.join(dir, 'links/two.sop'));
    const res = lightsop(['fmt', '--write', 'links/two.sop'], { cwd: dir });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(lstatSync(path.join(dir, 'links/two.sop')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(dir, 'links/two.sop'))).toBe('one.sop');
    expect(lstatSync(path.join(dir, 'links/one.sop')).isSymbolicLink()).toBe(true);
    expect(readFileSync(path.join(dir, 'real/plan.sop'), 'utf8')).toBe(tidy);
    expect(readdirSync(path.join(dir, 'real'))).toEqual(['plan.sop']);
    expect(readdirSync(path.join(dir, 'links')).sort()).toEqual(['one.sop', 'two.sop']);
  });

  it('a link found in a folder is not written when it leads out of that folder (a hostile repository)', () => {
    const dir = tempTree({ 'repo/plans/a.sop': messy, 'home/victim.sop': messy });
    symlinkSync('../../home/victim.sop', path.join(dir, 'repo/plans/evil.sop'));
    const walked = lightsop(['fmt', '--write', '.'], { cwd: path.join(dir, 'repo') });
    expect(walked.code).toBe(2);
    expect(walked.stderr).toBe(`lightsop: plans/evil.sop: is a link to ${path.join(realpathSync(dir), 'home/victim.sop')}, outside the folder being formatted; not formatted (name the link itself to format its target)\n`);
    expect(walked.stdout).toBe('plans/a.sop: formatted\n');
    expect(readFileSync(path.join(dir, 'home/victim.sop'), 'utf8')).toBe(messy);
    const globbed = lightsop(['fmt', '--write', 'plans/*.sop'], { cwd: path.join(dir, 'repo') });
    expect(globbed.code).toBe(2);
    expect(readFileSync(path.join(dir, 'home/victim.sop'), 'utf8')).toBe(messy);
    // Named on the command line, the link is the user's choice: its target is formatted.
    const named = lightsop(['fmt', '--write', 'plans/evil.sop'], { cwd: path.join(dir, 'repo') });
    expect(named.code).toBe(0);
    expect(readFileSync(path.join(dir, 'home/victim.sop'), 'utf8')).toBe(tidy);
    expect(lstatSync(path.join(dir, 'repo/plans/evil.sop')).isSymbolicLink()).toBe(true);
  });

  it('keeps hard links together: the file is written in place, every name sees the new text', () => {
    const dir = tempTree({ 'a.sop': messy });
    linkSync(path.join(dir, 'a.sop'), path.join(dir, 'b.txt'));
    const before = statSync(path.join(dir, 'a.sop'));
    const res = lightsop(['fmt', '--write', 'a.sop'], { cwd: dir });
    expect(res.code).toBe(0);
    const after = statSync(path.join(dir, 'a.sop'));
    expect(after.ino).toBe(before.ino);
    expect(after.nlink).toBe(2);
    expect(readFileSync(path.join(dir, 'b.txt'), 'utf8')).toBe(tidy);
    expect(readdirSync(dir).sort()).toEqual(['a.sop', 'b.txt']);
  });

  it('refuses a read-only file by name (exit 2), leaves it as it was and formats the others', () => {
    const dir = tempTree({ 'ro.sop': messy, 'rw.sop': messy });
    chmodSync(path.join(dir, 'ro.sop'), 0o444);
    const res = lightsop(['fmt', '--write', '.'], { cwd: dir });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe('lightsop: ro.sop: is read-only (mode 0444); not formatted\n');
    expect(res.stdout).toBe('rw.sop: formatted\n');
    expect(readFileSync(path.join(dir, 'ro.sop'), 'utf8')).toBe(messy);
    expect(statSync(path.join(dir, 'ro.sop')).mode & 0o7777).toBe(0o444);
    expect(readFileSync(path.join(dir, 'rw.sop'), 'utf8')).toBe(tidy);
    // An already formatted read-only file needs no write, so it is no error.
    chmodSync(path.join(dir, 'rw.sop'), 0o444);
    expect(lightsop(['fmt', '--write', 'rw.sop'], { cwd: dir }).code).toBe(0);
  });

  it('keeps the mode, the owner and the group', () => {
    const dir = tempTree({ 'p.sop': messy });
    const file = path.join(dir, 'p.sop');
    chmodSync(file, 0o640);
    // Only root can give a file away; then the CLI (as root) must give the new text back.
    if (isRoot) chownSync(file, 1234, 5678);
    const res = lightsop(['fmt', '--write', 'p.sop'], { cwd: dir });
    expect(res.code).toBe(0);
    const st = statSync(file);
    expect(readFileSync(file, 'utf8')).toBe(tidy);
    expect(st.mode & 0o7777).toBe(0o640);
    expect([st.uid, st.gid]).toEqual(isRoot ? [1234, 5678] : [process.getuid!(), process.getgid!()]);
  });

  it('does not replace a file the user may not write, even in a folder the user may write', () => {
    const dir = tempTree({ 'theirs.sop': messy });
    chmodSync(dir, 0o777);
    // As root the CLI runs as nobody on root's 0644 file; otherwise only a 0444 file of our own can
    // stand for a file we may not write.
    chmodSync(path.join(dir, 'theirs.sop'), isRoot ? 0o644 : 0o444);
    const owner = statSync(path.join(dir, 'theirs.sop')).uid;
    const res = lightsopAsOther(['fmt', '--write', 'theirs.sop'], dir);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^lightsop: theirs\.sop: (cannot write \(permission denied\)|is read-only)/);
    expect(readFileSync(path.join(dir, 'theirs.sop'), 'utf8')).toBe(messy);
    expect(statSync(path.join(dir, 'theirs.sop')).uid).toBe(owner);
    expect(readdirSync(dir)).toEqual(['theirs.sop']);
  });

  it('a failed write leaves the original and no temporary file behind (replace and in place)', () => {
    // 60 short declarations and one longer name: formatting pads every name to it, so the text
    // grows from under 1 KiB to over 1 KiB and a 1 KiB file-size limit makes the write fail.
    let plan = '';
    for (let i = 0; i < 60; i++) plan += `@${i === 59 ? 'abcdefghijkl' : `v${i}`} emit x\n`;
    expect(Buffer.byteLength(plan)).toBeLessThan(1024);
    expect(lightsop(['fmt', '-'], { input: plan }).stdout.length).toBeGreaterThan(1024);
    const dir = tempTree({ 'p.sop': plan, 'h.sop': plan });
    linkSync(path.join(dir, 'h.sop'), path.join(dir, 'h2.txt'));
    const replaced = lightsopWithSizeLimit(['fmt', '--write', 'p.sop'], dir, 1);
    expect(replaced.code).toBe(2);
    expect(replaced.stderr).toBe('lightsop: p.sop: cannot write (EFBIG); the file was left as it was\n');
    expect(readFileSync(path.join(dir, 'p.sop'), 'utf8')).toBe(plan);
    const inPlace = lightsopWithSizeLimit(['fmt', '--write', 'h.sop'], dir, 1);
    expect(inPlace.code).toBe(2);
    expect(inPlace.stderr).toBe('lightsop: h.sop: cannot write (EFBIG); the file was left as it was\n');
    expect(readFileSync(path.join(dir, 'h.sop'), 'utf8')).toBe(plan);
    expect(readdirSync(dir).sort()).toEqual(['h.sop', 'h2.txt', 'p.sop']);
  });
});

describe('output into a reader that stops early (item 8)', () => {
  /** Spawns the binary, reads the first chunk of its output and closes the pipe. */
  function readFirstChunk(args: string[], cwd: string): Promise<{ code: number | null; signal: string | null; stderr: string; got: number }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      let got = 0;
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.stdout.once('data', (d: Buffer) => {
        got = d.length;
        child.stdout.destroy();
      });
      child.on('close', (code, signal) => resolve({ code, signal, stderr, got }));
    });
  }

  let dir = '';
  beforeAll(() => {
    // Several MB of output for each command, far more than a pipe holds.
    let plan = '';
    for (let i = 0; i < 20000; i++) plan += `@v${i}   assign "${'x'.repeat(60)}"\n`;
    dir = tempTree({ 'big.sop': plan });
  });

  for (const args of [['lint', 'big.sop'], ['fmt', 'big.sop'], ['graph', 'big.sop', '--format', 'json'], ['run', 'big.sop', '--json']]) {
    it(`lightsop ${args.join(' ')} | head: no stack trace, the command's own exit code`, async () => {
      const res = await readFirstChunk(args, dir);
      expect(res.got).toBeGreaterThan(0);
      expect(res.stderr).toBe('');
      expect(res.signal).toBeNull();
      // lint finds only unused-variable infos, so every command succeeds.
      expect(res.code).toBe(0);
    }, 60000);
  }
});

describe('unreadable files, links and loops in a folder (item 9)', () => {
  it('an unreadable file is reported (exit 2) and the other files are still linted', () => {
    const dir = tempTree({ 'a-bad.sop': '@a emit $zz\n', 'b-locked.sop': '@b emit x\n', 'c-bad.sop': '@c emit $yy\n' });
    chmodSync(dir, 0o755);
    chmodSync(path.join(dir, 'b-locked.sop'), 0o000);
    const res = lightsopAsOther(['lint', '.'], dir);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe('lightsop: b-locked.sop: cannot read (permission denied)\n');
    expect(res.stdout).toContain("a-bad.sop:1:9: error: Variable 'zz' is not declared");
    expect(res.stdout).toContain("c-bad.sop:1:9: error: Variable 'yy' is not declared");
  });

  it('a folder reached twice through links, or a link to a plan, is linted and formatted once', () => {
    const dir = tempTree({ 'plans/a.sop': '@a   emit x\n' });
    mkdirSync(path.join(dir, 'plans/sub'));
    symlinkSync('..', path.join(dir, 'plans/sub/up'));
    symlinkSync('a.sop', path.join(dir, 'plans/link.sop'));
    const lint = lightsop(['lint', 'plans', 'plans/a.sop', '--format', 'json'], { cwd: dir });
    expect(lint.code).toBe(0);
    expect((JSON.parse(lint.stdout) as { file: string }[]).map((f) => f.file)).toEqual(['plans/a.sop']);
    const fmt = lightsop(['fmt', '--write', 'plans'], { cwd: dir });
    expect(fmt.code).toBe(0);
    expect(fmt.stdout).toBe('plans/a.sop: formatted\n');
    expect(lstatSync(path.join(dir, 'plans/link.sop')).isSymbolicLink()).toBe(true);
    expect(readFileSync(path.join(dir, 'plans/a.sop'), 'utf8')).toBe('@a emit x\n');
  });

  it('a named pipe given as a plan is refused at once instead of blocking', () => {
    const dir = tempTree({ 'ok.sop': '@a emit x\n' });
    expect(spawnSync('mkfifo', [path.join(dir, 'pipe.sop')]).status).toBe(0);
    const res = lightsop(['lint', 'pipe.sop', 'ok.sop'], { cwd: dir });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe('lightsop: pipe.sop: not a regular file\n');
    expect(res.stdout).toContain('1 file checked');
  });
});

describe('no plans, and the examples (item 12)', () => {
  it('lint and fmt of a folder without plans are errors that name the folder and the command', () => {
    const dir = tempTree({ 'empty/readme.txt': 'no plans here\n' });
    const lint = lightsop(['lint', 'empty'], { cwd: dir });
    expect(lint.code).toBe(2);
    expect(lint.stderr).toBe('lightsop: no plans (*.sop) found in empty\n');
    const here = lightsop(['lint'], { cwd: path.join(dir, 'empty') });
    expect(here.code).toBe(2);
    expect(here.stderr).toBe('lightsop: no plans (*.sop) found here; pass the plans to check: lightsop lint PATHS...\n');
    const fmt = lightsop(['fmt'], { cwd: path.join(dir, 'empty') });
    expect(fmt.code).toBe(2);
    expect(fmt.stderr).toBe('lightsop: no plans (*.sop) found here; pass the plans to format: lightsop fmt PATHS...\n');
  });

  it('the repository examples are formatted, and `npm run examples` checks it', () => {
    const res = lightsop(['fmt', '--check', 'examples'], { cwd: repoRoot });
    expect(res.stdout).toBe('');
    expect(res.code).toBe(0);
    const scripts = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.examples).toContain('lightsop fmt --check examples');
  });
});
