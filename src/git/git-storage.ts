import fs from 'node:fs/promises';
import { statSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { git, runGit, GitError } from './run-git.js';
import { encodeCommit, parseCommit, parseTree, readLooseObject, writeObject, type ObjectType } from './objects.js';
import { compareAndSwapMain, compareAndSwapRef, readMain, readRef, RefLockedError } from './refs.js';
import type { NewCommit, RepositoryStorage, TreeFile } from './repository-storage.js';
import { makeDirectory } from '../shared/directories.js';
import { DirectoryBytes } from './directory-bytes.js';
import { writeTreeObjects, type WrittenTree } from './tree-objects.js';
import { markVolume, probeVolume, RepositoryVolumeError, VOLUME_MARKER } from './volume.js';

const SHA_RE = /^[0-9a-f]{40}$/;
/** Repository ids become directory names: only ids of this shape ever reach the filesystem. */
const REPO_ID_RE = /^[a-z]+_[0-9a-z]{26}$/;
const MAIN = 'refs/heads/main';
const IDENTITY = 'Workspace Platform <renders@workspace-platform.invalid>';
/** Commits looked at in-process before `git merge-base` takes over. */
const ANCESTRY_WALK_LIMIT = 1000;
/**
 * Parsed commits kept in memory, oldest forgotten first: 600-900 bytes each with the key, so at
 * most 6-9 MB. The hour-long soak's heap snapshots found this cache filling (8,100 commits in 50
 * minutes): most of its heap growth.
 */
const COMMITS_REMEMBERED = 10_000;

type Commit = ReturnType<typeof parseCommit>;

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

/**
 * Bare repositories in a directory. Objects and the branch are written in this process, in git's
 * own formats (src/git/objects.ts, src/git/refs.ts); the git CLI makes repositories, reads what
 * gc packed, packs, and serves clones.
 */
export class GitStorage implements RepositoryStorage {
  /**
   * Commits already parsed, by repository and id: a commit never changes, and landing a queue of
   * restores walks the same recent history once per restore.
   */
  private readonly commits = new Map<string, Commit>();
  /** What each repository's object directories held when last counted (src/git/directory-bytes.ts). */
  private readonly sizes = new DirectoryBytes();

  constructor(private readonly root: string) {
    markVolume(root);
  }

  /** What is wrong with the repositories' volume now; null when it can be written. */
  async problem(): Promise<RepositoryVolumeError | null> {
    return probeVolume(this.root);
  }

  /**
   * Runs a repository operation; when it fails, the volume is probed, and a volume that is
   * missing, read-only or full is what the caller is told (an answer of the request, or an
   * operation's error), not the errno or exit status it caused here.
   */
  private async onVolume<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof RepositoryVolumeError) throw err;
      throw probeVolume(this.root) ?? err;
    }
  }

  /** The repository's directory: `<root>/<id>.git`. */
  pathOf(repoId: string): string {
    if (!REPO_ID_RE.test(repoId)) throw new Error(`not a repository id: ${repoId}`);
    return path.join(this.root, `${repoId}.git`);
  }

  create(repoId: string): Promise<void> {
    return this.onVolume(() => this.createOnVolume(repoId));
  }

  private async createOnVolume(repoId: string): Promise<void> {
    const target = this.pathOf(repoId);
    if (await this.exists(repoId)) return;
    // An empty mount point: a repository made there would be on the wrong disk.
    if (!statSync(path.join(this.root, VOLUME_MARKER), { throwIfNoEntry: false })) throw new RepositoryVolumeError('missing');
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

  remove(repoId: string): Promise<void> {
    return this.onVolume(async () => {
      const target = this.pathOf(repoId);
      // Renamed aside first, so that no reader ever finds half a repository under its name; a
      // removal cut short is finished by the next one (the job's retry), which finds the name gone.
      const aside = path.join(this.root, `.tmp-${repoId}-removed-${randomBytes(4).toString('hex')}`);
      try {
        await fs.rename(target, aside);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      for (const name of await fs.readdir(this.root)) {
        if (name.startsWith(`.tmp-${repoId}-`)) await fs.rm(path.join(this.root, name), { recursive: true, force: true });
      }
      for (const key of [...this.commits.keys()]) if (key.startsWith(`${target}\0`)) this.commits.delete(key);
      this.sizes.forget(target);
    });
  }

  async sizeBytes(repoId: string): Promise<number> {
    return this.sizes.of(this.pathOf(repoId));
  }

  /** Writes an object, and tells the sizes its directory changed. */
  private async writeObject(gitDir: string, type: ObjectType, content: Buffer): Promise<string> {
    const sha = await writeObject(gitDir, type, content);
    this.sizes.changed(gitDir, path.join(gitDir, 'objects', sha.slice(0, 2)));
    return sha;
  }

  async maintain(repoId: string, pruneAfterSeconds: number): Promise<void> {
    // The reflog keeps every position of `main` (all reachable anyway: it only moves forward).
    await git(['gc', '--quiet', `--prune=${pruneAfterSeconds}.seconds.ago`], { gitDir: this.pathOf(repoId), timeoutMs: 600_000 });
  }

  async exists(repoId: string): Promise<boolean> {
    // Synchronous, as head(): an asynchronous stat waited in line behind the renders' fsyncs for
    // one of the pool's four threads, 8-140 ms a render under the renders bench (issue 54).
    try {
      return statSync(path.join(this.pathOf(repoId), 'HEAD'), { throwIfNoEntry: false })?.isFile() ?? false;
    } catch {
      return false;
    }
  }

  async writeTree(repoId: string, files: readonly TreeFile[]): Promise<string> {
    return (await this.writeTreeWith(repoId, (gitDir) => writeTreeObjects(gitDir, files))).tree;
  }

  writeTreeWith<T extends WrittenTree>(repoId: string, write: (gitDir: string) => Promise<T>): Promise<T> {
    return this.onVolume(async () => {
      const gitDir = this.pathOf(repoId);
      const written = await write(gitDir);
      for (const sha of written.objects) this.sizes.changed(gitDir, path.join(gitDir, 'objects', sha.slice(0, 2)));
      return written;
    });
  }

  async readTree(repoId: string, tree: string): Promise<TreeFile[]> {
    const gitDir = this.pathOf(repoId);
    return (await this.readLooseTree(gitDir, assertSha(tree), '')) ?? this.readTreeWithGit(gitDir, tree);
  }

  /** Every file under a tree whose objects are all loose; null as soon as one is packed. */
  private async readLooseTree(gitDir: string, tree: string, prefix: string): Promise<TreeFile[] | null> {
    const object = await readLooseObject(gitDir, tree);
    if (!object) return null;
    if (object.type !== 'tree') throw new GitError(`${tree} is a ${object.type}, not a tree`, null, '');
    const files: TreeFile[] = [];
    for (const entry of parseTree(object.content)) {
      const p = prefix + entry.name;
      if (entry.mode === '40000') {
        const sub = await this.readLooseTree(gitDir, entry.sha, `${p}/`);
        if (!sub) return null;
        files.push(...sub);
      } else {
        const blob = await readLooseObject(gitDir, entry.sha);
        if (!blob) return null;
        if (blob.type !== 'blob') throw new GitError(`unexpected tree entry: ${p} is a ${blob.type}`, null, '');
        files.push({ path: p, content: blob.content });
      }
    }
    return files;
  }

  private async readTreeWithGit(gitDir: string, tree: string): Promise<TreeFile[]> {
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

  treeOf(repoId: string, commit: string): Promise<string> {
    return this.onVolume(async () => (await this.readCommit(repoId, commit)).tree);
  }

  commit(repoId: string, c: NewCommit): Promise<string> {
    return this.onVolume(() => this.commitOnVolume(repoId, c));
  }

  private async commitOnVolume(repoId: string, c: NewCommit): Promise<string> {
    const fields = { tree: assertSha(c.tree), parent: c.parent ? assertSha(c.parent) : null, identity: IDENTITY, timeSeconds: c.timeSeconds, message: c.message };
    const gitDir = this.pathOf(repoId);
    const bytes = encodeCommit(fields);
    const sha = await this.writeObject(gitDir, 'commit', bytes);
    this.remember(gitDir, sha, parseCommit(bytes));
    return sha;
  }

  async commitMessage(repoId: string, commit: string): Promise<string> {
    return (await this.readCommit(repoId, commit)).message;
  }

  async parentOf(repoId: string, commit: string): Promise<string | null> {
    return (await this.readCommit(repoId, commit)).parents[0] ?? null;
  }

  private async readCommit(repoId: string, commit: string): Promise<Commit> {
    const gitDir = this.pathOf(repoId);
    const known = await this.looseCommit(gitDir, assertSha(commit));
    return known ?? this.remember(gitDir, commit, parseCommit(await git(['cat-file', 'commit', commit], { gitDir })));
  }

  /** A commit read before (objects never change), or a loose one; null when only a pack has it. */
  private async looseCommit(gitDir: string, sha: string): Promise<Commit | null> {
    const known = this.commits.get(`${gitDir}\0${sha}`);
    if (known) return known;
    const loose = await readLooseObject(gitDir, sha);
    if (!loose) return null;
    if (loose.type !== 'commit') throw new GitError(`${sha} is a ${loose.type}, not a commit`, null, '');
    return this.remember(gitDir, sha, parseCommit(loose.content));
  }

  private remember(gitDir: string, sha: string, commit: Commit): Commit {
    if (this.commits.size >= COMMITS_REMEMBERED) this.commits.delete(this.commits.keys().next().value!);
    this.commits.set(`${gitDir}\0${sha}`, commit);
    return commit;
  }

  async head(repoId: string): Promise<string | null> {
    // Synchronous, as the reads of src/git/refs.ts: a stat is cheaper than a thread of the pool.
    if (!statSync(path.join(this.pathOf(repoId), 'HEAD'), { throwIfNoEntry: false })?.isFile()) throw probeVolume(this.root) ?? new GitError(`repository ${repoId} does not exist`, null, '');
    return readMain(this.pathOf(repoId));
  }

  advanceMain(repoId: string, next: string, expected: string | null): Promise<boolean> {
    return this.onVolume(() => this.advanceMainOnVolume(repoId, next, expected));
  }

  private async advanceMainOnVolume(repoId: string, next: string, expected: string | null): Promise<boolean> {
    const gitDir = this.pathOf(repoId);
    try {
      return await compareAndSwapMain(gitDir, assertSha(next), expected ? assertSha(expected) : null, { identity: IDENTITY, message: 'wsp: advance main' });
    } catch (err) {
      if (!(err instanceof RefLockedError)) throw err;
      // A lock left by a writer that died holding it (the machine or container killed in the
      // middle of a move) is never removed by git, and would fail every later render of the
      // install. A ref lock is held for under a millisecond: one older than ten seconds is stale. (Writers of
      // one repository also hold its install's row lock, so no two of them meet a stale lock at once.)
      if (await removeStaleLock(path.join(gitDir, `${MAIN}.lock`), REF_LOCK_STALE_MS)) return this.advanceMainOnVolume(repoId, next, expected);
      // Otherwise another writer holds it: it is moving main.
      return false;
    }
  }

  async readRef(repoId: string, ref: string): Promise<string | null> {
    return readRef(this.pathOf(repoId), assertChangeRef(ref));
  }

  setRef(repoId: string, ref: string, commit: string): Promise<void> {
    return this.onVolume(async () => {
      const gitDir = this.pathOf(repoId);
      const name = assertChangeRef(ref);
      // Writers of one install's refs hold its row lock: a lost swap is a stale lock or a reader's race, retried a few times.
      for (let attempt = 0; attempt < 5; attempt++) {
        const current = await readRef(gitDir, name);
        if (current === commit) return;
        try {
          if (await compareAndSwapRef(gitDir, name, assertSha(commit), current, { identity: IDENTITY, message: 'wsp: change request head' })) return;
        } catch (err) {
          if (!(err instanceof RefLockedError)) throw err;
          await removeStaleLock(path.join(gitDir, `${name}.lock`), REF_LOCK_STALE_MS);
        }
      }
      throw new Error(`${name} of ${repoId} could not be written`);
    });
  }

  /**
   * Walks parents from `descendant` through remembered and loose commits (a few steps in
   * practice: a commit checked soon after it was made); a packed commit or a long walk is left
   * to git.
   */
  async isAncestor(repoId: string, ancestor: string, descendant: string): Promise<boolean> {
    const gitDir = this.pathOf(repoId);
    const seen = new Set<string>();
    const queue = [assertSha(descendant)];
    while (queue.length > 0 && seen.size < ANCESTRY_WALK_LIMIT) {
      const sha = queue.shift()!;
      if (sha === assertSha(ancestor)) return true;
      if (seen.has(sha)) continue;
      seen.add(sha);
      const commit = await this.looseCommit(gitDir, sha);
      if (!commit) return this.isAncestorWithGit(gitDir, ancestor, descendant);
      queue.push(...commit.parents);
    }
    return queue.length === 0 ? false : this.isAncestorWithGit(gitDir, ancestor, descendant);
  }

  private async isAncestorWithGit(gitDir: string, ancestor: string, descendant: string): Promise<boolean> {
    const res = await runGit(['merge-base', '--is-ancestor', ancestor, descendant], { gitDir });
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
/**
 * The ref lock is held for well under a millisecond (src/git/refs.ts moves main without waiting
 * on anything): one ten seconds old was left by a process killed while holding it.
 */
const REF_LOCK_STALE_MS = 10_000;

/** Removes a lock file older than `staleMs`; true only when it did. */
async function removeStaleLock(lock: string, staleMs: number): Promise<boolean> {
  try {
    const { mtimeMs } = await fs.stat(lock);
    if (Date.now() - mtimeMs < staleMs) return false;
    await fs.unlink(lock);
    return true;
  } catch (err) {
    // Gone meanwhile: its writer finished; the caller's next try will see the new head.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** Only change requests' refs are written apart from `main`: `refs/changes/<number>`. */
function assertChangeRef(ref: string): string {
  if (!/^refs\/changes\/[1-9][0-9]{0,9}$/.test(ref)) throw new Error(`not a change request ref: ${ref}`);
  return ref;
}

function assertSha(sha: string): string {
  if (!SHA_RE.test(sha)) throw new GitError(`not an object id: ${sha.slice(0, 80)}`, null, '');
  return sha;
}
