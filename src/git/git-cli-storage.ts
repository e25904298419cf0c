import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { git, runGit, GitError } from './run-git.js';
import type { NewCommit, RepositoryStorage, TreeFile } from './repository-storage.js';
import { makeDirectory } from '../shared/directories.js';

const ZERO_SHA = '0'.repeat(40);
const SHA_RE = /^[0-9a-f]{40}$/;
/** Repository ids become directory names: only ids of this shape ever reach the filesystem. */
const REPO_ID_RE = /^[a-z]+_[0-9a-z]{26}$/;
const MAIN = 'refs/heads/main';
const BLOB_WRITERS = 4;
const IDENTITY = { name: 'Workspace Platform', email: 'renders@workspace-platform.invalid' };

/**
 * Settings of every repository made here. `core.fsync=committed` makes git fsync objects and
 * refs before it reports success, so a crash never leaves the branch naming a missing object;
 * the reflog keeps a record of every move of `main`; pushes may never rewrite or delete it.
 */
const REPO_CONFIG = `[core]
	fsync = committed
	fsyncMethod = fsync
	logAllRefUpdates = always
[receive]
	denyNonFastForwards = true
	denyDeletes = true
`;

interface DirEntry {
  files: Map<string, string>;
  dirs: Map<string, DirEntry>;
}

/** Bare repositories in a directory, driven through the git command line. */
export class GitCliStorage implements RepositoryStorage {
  constructor(private readonly root: string) {}

  /** The repository's directory: `<root>/<id>.git`. */
  pathOf(repoId: string): string {
    if (!REPO_ID_RE.test(repoId)) throw new Error(`not a repository id: ${repoId}`);
    return path.join(this.root, `${repoId}.git`);
  }

  async create(repoId: string): Promise<void> {
    const target = this.pathOf(repoId);
    if (await this.exists(repoId)) return;
    makeDirectory(this.root, 0o700);
    await removeAbandonedTemps(this.root, repoId);
    // Made aside and renamed into place, so no reader ever sees a half-made repository.
    const temp = path.join(this.root, `.tmp-${repoId}-${randomBytes(4).toString('hex')}`);
    try {
      await git(['init', '--quiet', '--bare', '--initial-branch=main', temp]);
      // The directory is still private: appending to its config saves a git process per setting.
      await fs.appendFile(path.join(temp, 'config'), REPO_CONFIG);
      await fs.rename(temp, target);
    } catch (err) {
      await fs.rm(temp, { recursive: true, force: true });
      // Another instance made it meanwhile: that is the same repository.
      if (await this.exists(repoId)) return;
      throw err;
    }
  }

  async sizeBytes(repoId: string): Promise<number> {
    return directoryBytes(this.pathOf(repoId));
  }

  async maintain(repoId: string, pruneAfterSeconds: number): Promise<void> {
    // The reflog keeps every position of `main` (all reachable anyway: it only moves forward).
    await git(['gc', '--quiet', `--prune=${pruneAfterSeconds}.seconds.ago`], { gitDir: this.pathOf(repoId), timeoutMs: 600_000 });
  }

  async exists(repoId: string): Promise<boolean> {
    try {
      return (await fs.stat(path.join(this.pathOf(repoId), 'HEAD'))).isFile();
    } catch {
      return false;
    }
  }

  async writeTree(repoId: string, files: readonly TreeFile[]): Promise<string> {
    const gitDir = this.pathOf(repoId);
    const blobs = await this.writeBlobs(gitDir, files);
    const root: DirEntry = { files: new Map(), dirs: new Map() };
    files.forEach((file, i) => {
      const segments = file.path.split('/');
      const name = segments.pop()!;
      let dir = root;
      for (const seg of segments) {
        let next = dir.dirs.get(seg);
        if (!next) dir.dirs.set(seg, (next = { files: new Map(), dirs: new Map() }));
        dir = next;
      }
      dir.files.set(name, blobs[i]!);
    });
    return this.writeDir(gitDir, root);
  }

  /** One `hash-object` per file, a few at a time: a large package does not wait in line. */
  private async writeBlobs(gitDir: string, files: readonly TreeFile[]): Promise<string[]> {
    const shas: string[] = new Array(files.length);
    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        const i = next++;
        shas[i] = parseSha(await git(['hash-object', '-w', '--no-filters', '--stdin'], { gitDir, input: files[i]!.content }));
      }
    };
    await Promise.all(Array.from({ length: Math.min(BLOB_WRITERS, files.length) }, worker));
    return shas;
  }

  private async writeDir(gitDir: string, dir: DirEntry): Promise<string> {
    // NUL-terminated entries: a name is never misread, whatever it contains.
    const entries: string[] = [];
    for (const [name, sha] of dir.files) entries.push(`100644 blob ${sha}\t${name}\0`);
    for (const [name, sub] of dir.dirs) entries.push(`040000 tree ${await this.writeDir(gitDir, sub)}\t${name}\0`);
    return parseSha(await git(['mktree', '-z'], { gitDir, input: entries.join('') }));
  }

  async readTree(repoId: string, tree: string): Promise<TreeFile[]> {
    const gitDir = this.pathOf(repoId);
    const listing = (await git(['ls-tree', '-r', '-z', '--full-tree', assertSha(tree)], { gitDir })).toString('utf8');
    const entries = listing
      .split('\0')
      .filter((e) => e.length > 0)
      .map((e) => {
        const tab = e.indexOf('\t');
        const [, type, sha] = e.slice(0, tab).split(' ');
        if (type !== 'blob' || !sha) throw new GitError(`unexpected tree entry: ${e}`, null, '');
        return { path: e.slice(tab + 1), sha };
      });
    if (entries.length === 0) return [];
    const out = await git(['cat-file', '--batch'], { gitDir, input: entries.map((e) => `${e.sha}\n`).join('') });
    // `--batch` answers each object as "<sha> <type> <size>\n<content>\n", in input order.
    const files: TreeFile[] = [];
    let pos = 0;
    for (const entry of entries) {
      const eol = out.indexOf(0x0a, pos);
      const header = out.subarray(pos, eol).toString('utf8').split(' ');
      const size = Number(header[2]);
      if (header[0] !== entry.sha || header[1] !== 'blob' || !Number.isInteger(size)) throw new GitError(`unexpected cat-file output for ${entry.sha}`, null, '');
      files.push({ path: entry.path, content: Buffer.from(out.subarray(eol + 1, eol + 1 + size)) });
      pos = eol + 1 + size + 1;
    }
    return files;
  }

  async treeOf(repoId: string, commit: string): Promise<string> {
    return parseSha(await git(['rev-parse', '--verify', `${assertSha(commit)}^{tree}`], { gitDir: this.pathOf(repoId) }));
  }

  async commit(repoId: string, c: NewCommit): Promise<string> {
    const date = `@${c.timeSeconds} +0000`;
    const args = ['commit-tree', '--no-gpg-sign', assertSha(c.tree)];
    if (c.parent) args.push('-p', assertSha(c.parent));
    const env = {
      GIT_AUTHOR_NAME: IDENTITY.name,
      GIT_AUTHOR_EMAIL: IDENTITY.email,
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_NAME: IDENTITY.name,
      GIT_COMMITTER_EMAIL: IDENTITY.email,
      GIT_COMMITTER_DATE: date,
    };
    return parseSha(await git(args, { gitDir: this.pathOf(repoId), input: c.message, env }));
  }

  async commitMessage(repoId: string, commit: string): Promise<string> {
    const raw = await this.rawCommit(repoId, commit);
    const blank = raw.indexOf('\n\n');
    return blank < 0 ? '' : raw.slice(blank + 2);
  }

  async parentOf(repoId: string, commit: string): Promise<string | null> {
    const raw = await this.rawCommit(repoId, commit);
    const blank = raw.indexOf('\n\n');
    // The first `parent` header line; the message after the blank line is not looked at.
    const parent = /^parent ([0-9a-f]{40})$/m.exec(blank < 0 ? raw : raw.slice(0, blank));
    return parent ? parent[1]! : null;
  }

  private async rawCommit(repoId: string, commit: string): Promise<string> {
    return (await git(['cat-file', 'commit', assertSha(commit)], { gitDir: this.pathOf(repoId) })).toString('utf8');
  }

  async head(repoId: string): Promise<string | null> {
    const gitDir = this.pathOf(repoId);
    if (!(await this.exists(repoId))) throw new GitError(`repository ${repoId} does not exist`, null, '');
    const res = await runGit(['rev-parse', '--verify', '--quiet', `${MAIN}^{commit}`], { gitDir });
    if (res.code === 0) return parseSha(res.stdout);
    // Exit 1 without output: the branch is unborn. Anything else is a broken repository.
    if (res.code === 1 && res.stdout.length === 0) return null;
    throw new GitError(`git rev-parse failed (${res.code}): ${res.stderr}`, res.code, res.stderr);
  }

  async advanceMain(repoId: string, next: string, expected: string | null): Promise<boolean> {
    const gitDir = this.pathOf(repoId);
    // update-ref with an old value is git's own compare-and-swap: it takes the ref's lock
    // file, checks the old value under it, and writes only if it still matches.
    const res = await runGit(['update-ref', '-m', 'wsp: advance main', MAIN, assertSha(next), expected ? assertSha(expected) : ZERO_SHA], { gitDir });
    if (res.code === 0) return true;
    if ((await this.head(repoId)) !== expected) return false;
    if (/cannot lock ref|\.lock/.test(res.stderr)) {
      // A lock left by a writer that died holding it (the machine or container killed in the
      // middle of update-ref) is never removed by git, and would fail every later render of the
      // install. A ref lock is held for milliseconds: one older than a minute is stale. (Writers of
      // one repository also hold its install's row lock, so no two of them meet a stale lock at once.)
      if (await removeStaleLock(path.join(gitDir, `${MAIN}.lock`))) return this.advanceMain(repoId, next, expected);
      // Otherwise another writer holds it (past git's own 100 ms wait): it is moving main.
      return false;
    }
    throw new GitError(`git update-ref failed (${res.code}): ${res.stderr}`, res.code, res.stderr);
  }

  async isAncestor(repoId: string, ancestor: string, descendant: string): Promise<boolean> {
    const res = await runGit(['merge-base', '--is-ancestor', assertSha(ancestor), assertSha(descendant)], { gitDir: this.pathOf(repoId) });
    if (res.code === 0) return true;
    if (res.code === 1) return false;
    throw new GitError(`git merge-base failed (${res.code}): ${res.stderr}`, res.code, res.stderr);
  }
}

/**
 * Removes this repository's half-made copies older than STALE_LOCK_MS: a process killed during
 * `git init` leaves one that nothing else would ever delete. A younger one may be another
 * instance's creation in progress, and is left to it.
 */
/**
 * The bytes of the files below `dir`. A file or directory that vanishes while it is counted
 * (`git gc` running beside: its lock and pid files, loose objects it packs) counts for nothing.
 */
async function directoryBytes(dir: string): Promise<number> {
  const gone = (err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  };
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch((err: unknown) => (gone(err), []));
  let total = 0;
  for (const entry of entries) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await directoryBytes(p);
    else if (entry.isFile()) total += await fs.stat(p).then((st) => st.size, gone);
  }
  return total;
}

async function removeAbandonedTemps(root: string, repoId: string): Promise<void> {
  const prefix = `.tmp-${repoId}-`;
  for (const name of await fs.readdir(root)) {
    if (!name.startsWith(prefix)) continue;
    const dir = path.join(root, name);
    try {
      if (Date.now() - (await fs.stat(dir)).mtimeMs >= STALE_LOCK_MS) await fs.rm(dir, { recursive: true, force: true });
    } catch {
      // Gone meanwhile (renamed into place or removed by its maker).
    }
  }
}

/** A lock file untouched for this long belongs to no live writer. */
const STALE_LOCK_MS = 60_000;

/** Removes a lock file older than STALE_LOCK_MS; true only when it did. */
async function removeStaleLock(lock: string): Promise<boolean> {
  try {
    const { mtimeMs } = await fs.stat(lock);
    if (Date.now() - mtimeMs < STALE_LOCK_MS) return false;
    await fs.unlink(lock);
    return true;
  } catch (err) {
    // Gone meanwhile: its writer finished; the caller's next try will see the new head.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

function parseSha(out: Buffer): string {
  const sha = out.toString('utf8').trim();
  if (!SHA_RE.test(sha)) throw new GitError(`git printed no object id: ${sha.slice(0, 80)}`, null, '');
  return sha;
}

function assertSha(sha: string): string {
  if (!SHA_RE.test(sha)) throw new GitError(`not an object id: ${sha.slice(0, 80)}`, null, '');
  return sha;
}
