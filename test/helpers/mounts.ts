import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Real mounts for the fault tests (issue 22): a small tmpfs that fills up, a bind mount that is
 * remounted read-only or taken away. They need root (CI and the development machine run tests as
 * root); elsewhere `mountSkip` says why a test cannot run, and scripts/test.mjs expects that skip
 * only where mounting is impossible.
 */
export function mountSkip(): string | false {
  if (process.platform !== 'linux') return 'mounts are made with Linux mount(8)';
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  return false;
}

const mount = (...args: string[]) => execFileSync('mount', args, { stdio: ['ignore', 'pipe', 'pipe'] });

/** A new directory with a tmpfs of `sizeMb` on it. */
export function mountTmpfs(prefix: string, sizeMb: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  mount('-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0755`, 'tmpfs', dir);
  return dir;
}

export function bindMount(source: string, target: string): void {
  mount('--bind', source, target);
}

export function remount(dir: string, mode: 'ro' | 'rw', bind: boolean): void {
  mount('-o', `remount,${bind ? 'bind,' : ''}${mode}`, dir);
}

/** Unmounts, then removes the directory; nothing thrown (it runs in `after`, also after a failure). */
export function unmountAndRemove(dir: string, removeDir = true): void {
  for (let i = 0; i < 3 && isMountPoint(dir); i++) {
    try {
      execFileSync('umount', [dir], { stdio: 'ignore' });
    } catch {
      // busy: a lazy unmount detaches it all the same
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      } catch {
        // not mounted any more
      }
    }
  }
  if (removeDir) fs.rmSync(dir, { recursive: true, force: true });
}

export function unmount(dir: string): void {
  execFileSync('umount', [dir], { stdio: ['ignore', 'pipe', 'pipe'] });
}

export function isMountPoint(dir: string): boolean {
  const target = path.resolve(dir);
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[4] === target);
}

/**
 * Writes a file in `dir` until the disk refuses (ENOSPC): what an operator's runaway log does.
 * Returns its path; deleting it frees the space.
 */
export function fillDisk(dir: string): string {
  const filler = path.join(dir, 'filler.bin');
  const chunk = Buffer.alloc(64 * 1024, 0x5a);
  const fd = fs.openSync(filler, 'w');
  try {
    for (;;) {
      try {
        fs.writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        break;
      }
    }
    // The last partial chunk: smaller writes until not one byte fits.
    for (let size = 32 * 1024; size >= 1; size = Math.floor(size / 2)) {
      try {
        fs.writeSync(fd, chunk.subarray(0, size));
        size *= 2;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return filler;
}

/** Bytes free on the file system holding `dir`. */
export function freeBytes(dir: string): number {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
}
