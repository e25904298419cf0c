import fs from 'node:fs';
import path from 'node:path';

/**
 * The branch `main`, read and moved in this process with git's own files protocol, so a move
 * costs a few file operations instead of a `git update-ref` process, and interleaves safely with
 * git itself (gc's pack-refs, a `git` run by hand, another instance on the shared volume):
 * - the value is `refs/heads/main`, or its line in `packed-refs` when gc packed it and no loose
 *   file overrides it (gc writes packed-refs before it deletes the loose file);
 * - a move takes `refs/heads/main.lock` exclusively (O_EXCL, as git does), checks the current
 *   value under it, writes and fsyncs the new one into the lock, appends the reflog line and
 *   renames the lock over the ref.
 * Synchronous, fsync included: a thread of the pool cost more than each of these small calls
 * (src/git/objects.ts), and nothing may wait while the lock is held.
 */
const MAIN = 'refs/heads/main';
const ZERO_SHA = '0'.repeat(40);
const SHA_RE = /^[0-9a-f]{40}$/;

export class RefLockedError extends Error {}

export async function readMain(gitDir: string): Promise<string | null> {
  return readRef(gitDir, MAIN);
}

/** Any ref of the repository (`refs/heads/main`, `refs/changes/3`), read as `readMain` reads `main`. */
export async function readRef(gitDir: string, ref: string): Promise<string | null> {
  try {
    return checked(fs.readFileSync(path.join(gitDir, ref), 'latin1').trim(), ref);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  let packed: string;
  try {
    packed = fs.readFileSync(path.join(gitDir, 'packed-refs'), 'latin1');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  for (const line of packed.split('\n')) {
    if (line.endsWith(` ${ref}`)) return checked(line.slice(0, 40), ref);
  }
  return null;
}

function checked(value: string, ref: string): string {
  if (!SHA_RE.test(value)) throw new Error(`${ref} holds no object id: ${value.slice(0, 60)}`);
  return value;
}

/**
 * Moves `main` from `expected` (null: unborn) to `next`. False when it holds something else;
 * RefLockedError when another writer holds its lock (git waits 100 ms for a ref lock too).
 */
export async function compareAndSwapMain(gitDir: string, next: string, expected: string | null, reflog: { identity: string; message: string }): Promise<boolean> {
  return compareAndSwapRef(gitDir, MAIN, next, expected, reflog);
}

/** `compareAndSwapMain` for any ref (a change request's `refs/changes/<number>`). */
export async function compareAndSwapRef(gitDir: string, refName: string, next: string, expected: string | null, reflog: { identity: string; message: string }): Promise<boolean> {
  const ref = path.join(gitDir, refName);
  fs.mkdirSync(path.dirname(ref), { recursive: true });
  const lock = `${ref}.lock`;
  const fd = await takeLock(lock);
  let closed = false;
  let renamed = false;
  try {
    if ((await readRef(gitDir, refName)) !== expected) return false;
    fs.writeFileSync(fd, `${next}\n`);
    // Synchronous, as all between taking the lock and renaming it: a process killed (kill -9)
    // while it held the lock leaves it behind, so the lock is held for as short a time as can be.
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    closed = true;
    const logFile = path.join(gitDir, 'logs', refName);
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    appendWhole(logFile, `${expected ?? ZERO_SHA} ${next} ${reflog.identity} ${Math.floor(Date.now() / 1000)} +0000\t${reflog.message}\n`);
    fs.renameSync(lock, ref);
    renamed = true;
    return true;
  } finally {
    if (!closed) fs.closeSync(fd);
    if (!renamed) fs.rmSync(lock, { force: true });
  }
}

/**
 * Appends a line or nothing: a full disk can stop an append halfway, and the next move's line
 * would then continue the broken one, a reflog line git cannot parse.
 */
function appendWhole(file: string, line: string): void {
  const fd = fs.openSync(file, 'a', 0o644);
  const size = fs.fstatSync(fd).size;
  try {
    fs.writeFileSync(fd, line);
  } catch (err) {
    try {
      fs.ftruncateSync(fd, size);
    } catch {
      // Shrinking a file needs no space; a volume gone read-only meanwhile wrote nothing either.
    }
    throw err;
  } finally {
    fs.closeSync(fd);
  }
}

const LOCK_WAIT_MS = 100;

async function takeLock(lock: string): Promise<number> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      return fs.openSync(lock, 'wx', 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (Date.now() >= deadline) throw new RefLockedError(`${lock} is held by another writer`);
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 10));
    }
  }
}
