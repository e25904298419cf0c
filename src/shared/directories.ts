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
