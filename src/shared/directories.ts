import fs from 'node:fs';
import path from 'node:path';

/**
 * `mkdir -p`, one level at a time. Node's own `{ recursive: true }` never returns for some
 * paths on pseudo file systems (`/proc/x` spins at full CPU on Node 20), so a mistyped
 * WSP_DATA_DIR hung the server at start instead of failing with a message.
 */
export function makeDirectory(dir: string, mode?: number): void {
  const target = path.resolve(dir);
  const missing: string[] = [];
  for (let p = target; !fs.existsSync(p); p = path.dirname(p)) {
    missing.push(p);
    if (path.dirname(p) === p) break;
  }
  for (const p of missing.reverse()) {
    try {
      fs.mkdirSync(p, mode === undefined ? undefined : { mode });
    } catch (err) {
      // Made meanwhile by another process starting at the same time: that is the same directory.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot create the directory ${target}: ${(err as Error).message}`);
    }
  }
  if (!fs.statSync(target).isDirectory()) throw new Error(`${target} exists and is not a directory`);
}

/**
 * A file only this user may read, made empty if missing. Files made later beside it by SQLite
 * (`-wal`, `-shm`) take its mode.
 */
export function makePrivateFile(file: string): void {
  try {
    fs.closeSync(fs.openSync(file, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/**
 * Which of these existing paths other local users can read or enter: the data directory holds
 * install values in clear, the cursor key and the master key. Left as they are (an operator may
 * have chosen it), but said at every start.
 */
export function openToOthers(paths: string[]): Array<{ path: string; mode: string }> {
  const out: Array<{ path: string; mode: string }> = [];
  for (const p of paths) {
    let mode: number;
    try {
      mode = fs.statSync(p).mode & 0o777;
    } catch {
      continue;
    }
    if ((mode & 0o077) !== 0) out.push({ path: p, mode: mode.toString(8).padStart(4, '0') });
  }
  return out;
}
