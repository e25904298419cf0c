import fs from 'node:fs';
import path from 'node:path';

/**
 * A directory whose mtime is this close to the walk's start may change again within the same
 * tick of the filesystem's clock (ext4 stamps with the kernel's coarse clock, a few ms) without
 * its mtime changing: it is counted, never remembered.
 */
const RACY_MS = 100;
/** Repositories whose object directories are remembered, the least recently measured forgotten first. */
const REPOSITORIES_REMEMBERED = 256;
/** Files stat-ed between two turns of the event loop. */
const STATS_PER_TURN = 256;

interface Known {
  ino: bigint;
  mtimeNs: bigint;
  bytes: number;
}

const gone = (err: unknown): null => {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
  throw err;
};

/**
 * The bytes of the files below a repository's directory, as a walk of it counts them, without
 * stat-ing every loose object on every render. Object directories (`objects/<xx>`,
 * `objects/pack`) only ever change by a file made, renamed or deleted in them (objects are
 * immutable, written aside and renamed into place; packs likewise), and each of those changes
 * the directory's mtime: one whose mtime is what it was when it was last counted holds the same
 * files. Everything else (refs, the reflog that grows in place, config) is counted every time.
 * Before, a render of a repository of 5,000 loose objects spent 300 ms stat-ing them (issue 54).
 */
export class DirectoryBytes {
  private readonly known = new Map<string, Map<string, Known>>();

  async of(root: string): Promise<number> {
    let dirs = this.known.get(root);
    if (dirs) this.known.delete(root);
    else dirs = new Map();
    this.known.set(root, dirs);
    if (this.known.size > REPOSITORIES_REMEMBERED) this.known.delete(this.known.keys().next().value!);
    const walk = new Walk(dirs, Date.now());
    const bytes = await walk.tree(root, path.join(root, 'objects'));
    // Directories gone since (packed by gc, or the repository removed) are forgotten.
    for (const dir of dirs.keys()) if (!walk.seen.has(dir)) dirs.delete(dir);
    return bytes;
  }

  /** This process wrote into `dir` (a belt to the mtime's braces: a change in the same tick). */
  changed(root: string, dir: string): void {
    this.known.get(root)?.delete(dir);
  }

  forget(root: string): void {
    this.known.delete(root);
  }
}

class Walk {
  readonly seen = new Set<string>();
  private stats = 0;

  constructor(
    private readonly dirs: Map<string, Known>,
    private readonly startMs: number,
  ) {}

  /** A file or directory that vanishes while it is counted (`git gc` beside: its lock files, loose objects it packs) counts for nothing. */
  async tree(dir: string, objects: string | null): Promise<number> {
    const entries = this.list(dir);
    if (!entries) return 0;
    let total = 0;
    for (const entry of entries) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) total += dir === objects ? await this.objectDir(p) : await this.tree(p, objects);
      else if (entry.isFile()) total += await this.file(p);
    }
    return total;
  }

  private async objectDir(dir: string): Promise<number> {
    this.seen.add(dir);
    const st = fs.statSync(dir, { bigint: true, throwIfNoEntry: false });
    if (!st) return 0;
    const known = this.dirs.get(dir);
    if (known && known.ino === st.ino && known.mtimeNs === st.mtimeNs) return known.bytes;
    const entries = this.list(dir);
    if (!entries) return 0;
    let bytes = 0;
    for (const entry of entries) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) bytes += await this.tree(p, null);
      else if (entry.isFile()) bytes += await this.file(p);
    }
    // A temporary file still being written grows without its directory changing.
    const settled = Number(st.mtimeMs) < this.startMs - RACY_MS && !entries.some((e) => e.name.startsWith('tmp_') || e.name.startsWith('.tmp-'));
    if (settled) this.dirs.set(dir, { ino: st.ino, mtimeNs: st.mtimeNs, bytes });
    else this.dirs.delete(dir);
    return bytes;
  }

  /**
   * Synchronous, a turn of the event loop given back every STATS_PER_TURN: asynchronous stats
   * waited in line behind the renders' fsyncs for the pool's four threads.
   */
  private async file(p: string): Promise<number> {
    if (++this.stats % STATS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    try {
      return fs.statSync(p, { throwIfNoEntry: false })?.size ?? 0;
    } catch (err) {
      return gone(err) ?? 0;
    }
  }

  private list(dir: string): fs.Dirent[] | null {
    try {
      return fs.readdirSync(dir, { withFileTypes: true });
    } catch (err) {
      return gone(err);
    }
  }
}
