// The attacker of the race test (file-race.test.ts): swaps, as fast as it can, a file of the
// workspace between a regular file and a symbolic link to an outside file, and a folder of the
// workspace between a real folder and a symbolic link to an outside folder. Every swap is done
// with renames, so a file skill that checks a path and then uses it can be caught in between.
// Usage: node symlink-swapper.mjs WORKSPACE OUTSIDE_FOLDER. Prints "ready" once both swaps ran.
import { lstatSync, mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const [root, outside] = process.argv.slice(2);
const file = path.join(root, 'f');
const dir = path.join(root, 'd');
const held = path.join(root, '.held-d');
const tmp = path.join(root, '.swap-tmp');
const tmpFile = path.join(root, '.swap-file');

const quietly = (fn) => {
  try {
    fn();
    return true;
  } catch {
    return false;
  }
};

/** Removes a path without following it: a link is unlinked, a folder removed with its files. */
function remove(p) {
  let info;
  try {
    info = lstatSync(p);
  } catch {
    return;
  }
  if (info.isDirectory()) rmSync(p, { recursive: true, force: true });
  else unlinkSync(p);
}

/** Puts a real inside folder (holding file.txt) at `d`, by moving the held one back or anew. */
function dirToReal() {
  quietly(() => {
    if (lstatSync(dir).isSymbolicLink()) unlinkSync(dir);
  });
  if (!quietly(() => renameSync(held, dir))) {
    remove(held);
    if (!quietly(() => lstatSync(dir))) {
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'file.txt'), 'inside');
    }
  }
}

/** Moves the real folder aside and puts a link to the outside folder at `d`. */
function dirToLink() {
  if (!quietly(() => renameSync(dir, held))) return;
  remove(tmp);
  quietly(() => symlinkSync(outside, tmp));
  if (!quietly(() => renameSync(tmp, dir))) remove(tmp);
}

function fileToLink() {
  remove(tmp);
  quietly(() => symlinkSync(path.join(outside, 'secret.txt'), tmp));
  if (!quietly(() => renameSync(tmp, file))) remove(tmp);
}

function fileToReal() {
  quietly(() => writeFileSync(tmpFile, 'inside'));
  if (!quietly(() => renameSync(tmpFile, file))) remove(tmpFile);
}

let announced = false;
for (let i = 0; ; i++) {
  fileToLink();
  dirToLink();
  fileToReal();
  dirToReal();
  if (!announced) {
    announced = true;
    process.stdout.write('ready\n');
  }
  // Let the event loop breathe now and then so a kill or a closed pipe is noticed.
  if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
}
