/**
 * The parts of the distributed runner that need no Redis: the batch's input and results files
 * (positions in errors, an interrupted last line, a foreign file left alone, the lock), the
 * progress line, and `--redis` URLs (passwords never shown).
 */
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatEta, formatProgress, parseRedisUrl } from '@lightsop/distributed';
import { ProgressReporter } from '../../packages/distributed/src/progress';
import { indexInputs, openResults, readInput } from '../../packages/distributed/src/batch-files';
import { redactText } from '../../packages/distributed/src/redis';
import { removeTempDirs, tempDir } from './procs';

const tmp = () => tempDir('lightsop-batch-files-');
afterAll(() => removeTempDirs());

describe('batch inputs', () => {
  it('indexes JSON lines: blank lines skipped, CRLF accepted, ids from plan, line and content', () => {
    const dir = tmp();
    const file = path.join(dir, 'in.jsonl');
    writeFileSync(file, '"a"\r\n\n{"x": 1}\n"a"');
    const index = indexInputs(file, 'in.jsonl', 'plan1');
    expect(index.count).toBe(3);
    expect([...index.lines]).toEqual([1, 3, 4]);
    expect(index.idOf(0)).toMatch(/^plan1-1-[0-9a-f]{16}$/);
    // The same content on another line is another input.
    expect(index.idOf(2)!.split('-')[2]).toBe(index.idOf(0)!.split('-')[2]);
    expect(index.idOf(2)).not.toBe(index.idOf(0));
    const fd = openSync(file, 'r');
    try {
      expect(readInput(fd, index, 1)).toEqual({ x: 1 });
      expect(readInput(fd, index, 2)).toBe('a');
    } finally {
      closeSync(fd);
    }
    expect(indexInputs(file, 'in.jsonl', 'plan2').idOf(0)).not.toBe(index.idOf(0));
  });

  it('a line that is not JSON is an error with file, line and column', () => {
    const dir = tmp();
    const file = path.join(dir, 'in.jsonl');
    writeFileSync(file, '"ok"\n{"a": 1,}\n');
    expect(() => indexInputs(file, 'in.jsonl', 'p')).toThrow(/^in\.jsonl:2:9: each line must be one JSON value/);
    writeFileSync(file, '"ok"\nplain text\n');
    expect(() => indexInputs(file, 'in.jsonl', 'p')).toThrow(/^in\.jsonl:2:1: /);
    writeFileSync(file, Buffer.from([0x22, 0xff, 0x22, 0x0a]));
    expect(() => indexInputs(file, 'in.jsonl', 'p')).toThrow(/^in\.jsonl:1:1: the line is not UTF-8/);
    expect(() => indexInputs(path.join(dir, 'missing.jsonl'), 'missing.jsonl', 'p')).toThrow(/^missing\.jsonl: no such file$/);
  });
});

describe('batch results file', () => {
  it('writes each id once, keeps what is there, and drops only an incomplete last line', () => {
    const dir = tmp();
    const file = path.join(dir, 'out.jsonl');
    writeFileSync(file, '{"id":"a","status":"success"}\n{"id":"b","status":"fail"}\n{"id":"c","sta');
    const results = openResults(file, 'out.jsonl');
    expect(results.repaired).toMatch(/dropped an incomplete last line \(14 bytes\)/);
    expect([...results.done]).toEqual(['a', 'b']);
    expect([...results.notOkBefore]).toEqual(['b']);
    expect(results.append('a', { id: 'a', again: true })).toBe(false);
    expect(results.append('c', { id: 'c', status: 'success' })).toBe(true);
    expect(results.append('c', { id: 'c', status: 'success' })).toBe(false);
    expect(existsSync(`${file}.lock`)).toBe(true);
    results.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('{"id":"a","status":"success"}\n{"id":"b","status":"fail"}\n{"id":"c","status":"success"}\n');
  });

  it('refuses a file that is not a results file, and leaves it byte for byte', () => {
    const dir = tmp();
    const file = path.join(dir, 'notes.txt');
    const text = 'my notes\nmore notes\n';
    writeFileSync(file, text);
    expect(() => openResults(file, 'notes.txt')).toThrow(/^notes\.txt:1:1: not a result line of lightsop batch; give another --out/);
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('one writer at a time: a live lock is refused, a stale one is taken over', () => {
    const dir = tmp();
    const file = path.join(dir, 'out.jsonl');
    const first = openResults(file, 'out.jsonl');
    expect(() => openResults(file, 'out.jsonl')).toThrow(/another lightsop batch \(\d+@.*\) is writing it/);
    first.close();
    writeFileSync(`${file}.lock`, `999999999@${hostname()}`);
    const second = openResults(file, 'out.jsonl');
    second.close();
  });
});

describe('batch progress', () => {
  it('shows done/total, percent, throughput and ETA, with a bar on a terminal', () => {
    expect(formatProgress({ done: 250, total: 1000, notOk: 0, rate: 50 }, 20)).toBe('[#####...............] 250/1000  25% 50.0/s ETA 15s');
    expect(formatProgress({ done: 0, total: 10, notOk: 0, rate: null }, 0)).toBe('0/10   0% -/s ETA ?');
    expect(formatProgress({ done: 10, total: 10, notOk: 2, rate: 312.4 }, 0)).toBe('10/10 100% 312/s ETA 0s (2 not ok)');
    expect(formatEta(185)).toBe('3m05s');
    expect(formatEta(3720)).toBe('1h02m');
  });
});

describe('the progress reporter', () => {
  it('redraws one bar in place on a terminal and ends the line; prints plain lines otherwise', () => {
    let tty = '';
    const bar = new ProgressReporter({ total: 4, skipped: 1, tty: true, columns: 100, write: (t) => void (tty += t), intervalMs: 1000 });
    bar.add(true);
    bar.add(false);
    bar.add(true);
    bar.finish();
    expect(tty.startsWith('\r\x1b[2K[')).toBe(true);
    expect(tty.endsWith('4/4 100% -/s ETA 0s (1 not ok)\n')).toBe(true);
    expect(tty.split('\n')).toHaveLength(2);
    let plain = '';
    const lines = new ProgressReporter({ total: 2, skipped: 0, tty: false, columns: 80, write: (t) => void (plain += t), intervalMs: 60_000 });
    lines.add(true);
    lines.add(true);
    lines.finish();
    expect(plain).toBe('lightsop batch: 2/2 100% -/s ETA 0s\n');
  });
});

describe('--redis URLs', () => {
  it('parses host, port, database, user and TLS; a password never appears in what is shown', () => {
    const t = parseRedisUrl('rediss://worker:s3cret%21@redis.example:6380/2', {});
    expect(t.options).toMatchObject({ host: 'redis.example', port: 6380, db: 2, username: 'worker', password: 's3cret!' });
    expect(t.options.tls).toBeDefined();
    expect(t.display).toBe('rediss://***@redis.example:6380/2');
    expect(parseRedisUrl('redis://127.0.0.1', { LIGHTSOP_REDIS_PASSWORD: 'fromenv' }).options.password).toBe('fromenv');
    expect(() => parseRedisUrl('redis://h:1/x', {})).toThrow(/the database must be a number/);
    expect(() => parseRedisUrl('not a url :pw@', {})).toThrow(/expected a URL such as redis:\/\/127\.0\.0\.1:6379/);
    expect(redactText('failed redis://u:topsecret@h:1 now')).toBe('failed redis://***@h:1 now');
  });
});
