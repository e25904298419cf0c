import type { RepositoryVolumeError } from './volume.js';
import type { WrittenTree } from './tree-objects.js';

/** One file of a tree: a normalized relative path and its bytes. */
export interface TreeFile {
  path: string;
  content: Buffer;
}

export interface NewCommit {
  tree: string;
  /** The commit this one follows; null only for the first commit of a repository. */
  parent: string | null;
  message: string;
  /** Author and committer date, Unix seconds (from the injected clock). */
  timeSeconds: number;
}

/**
 * Where the installs' git repositories live. One repository per install, one branch `main`.
 * Everything written is content-addressed except the branch, which only ever moves by
 * compare-and-swap: that is what lets several server instances share the storage (a shared
 * volume today, a git hosting API tomorrow) without losing a commit.
 */
export interface RepositoryStorage {
  /** Makes the repository (bare, branch `main` unborn); doing it again changes nothing. */
  create(repoId: string): Promise<void>;
  exists(repoId: string): Promise<boolean>;
  /** Removes the repository and everything in it; a repository already gone is no error. */
  remove(repoId: string): Promise<void>;
  /** Writes the files as blobs and trees; returns the root tree's id. */
  writeTree(repoId: string, files: readonly TreeFile[]): Promise<string>;
  /**
   * Has `write` write a tree's objects into the repository's directory on this machine, and
   * answers what it answers: a render thread writes its render's objects itself
   * (src/git/tree-objects.ts), off the event loop.
   */
  writeTreeWith<T extends WrittenTree>(repoId: string, write: (gitDir: string) => Promise<T>): Promise<T>;
  /** Every file of a tree, in path order. */
  readTree(repoId: string, tree: string): Promise<TreeFile[]>;
  /** The root tree of a commit. */
  treeOf(repoId: string, commit: string): Promise<string>;
  /** Writes a commit object (the branch does not move). */
  commit(repoId: string, commit: NewCommit): Promise<string>;
  commitMessage(repoId: string, commit: string): Promise<string>;
  /** The first parent of a commit; null for a root commit. */
  parentOf(repoId: string, commit: string): Promise<string | null>;
  /** The commit `main` points at; null while the branch is unborn. */
  head(repoId: string): Promise<string | null>;
  /**
   * Moves `main` to `next` if and only if it still points at `expected` (null: unborn).
   * False when another writer moved it first (or holds it while moving it): re-read the head
   * and build on it.
   */
  advanceMain(repoId: string, next: string, expected: string | null): Promise<boolean>;
  /** A ref other than `main` (a change request's `refs/changes/<number>`); null when it does not exist. */
  readRef(repoId: string, ref: string): Promise<string | null>;
  /**
   * Points a ref other than `main` at `commit`, whatever it held (a change request's head moves
   * when it is re-parented; git's fetch of `refs/changes/<number>` takes whatever it names).
   */
  setRef(repoId: string, ref: string, commit: string): Promise<void>;
  /** True when `ancestor` is `descendant` or reachable from it through parents. */
  isAncestor(repoId: string, ancestor: string, descendant: string): Promise<boolean>;
  /** What the repository takes on disk, in bytes (its quota: WSP_QUOTA_REPOSITORY_BYTES). */
  sizeBytes(repoId: string): Promise<number>;
  /**
   * Packs the repository and deletes what nothing references (the objects of a render that
   * failed after writing its tree) once older than `pruneAfterSeconds`: a render under way
   * writes its objects seconds before its commit names them, so they are never that old.
   */
  maintain(repoId: string, pruneAfterSeconds: number): Promise<void>;
  /**
   * What is wrong with the storage as a whole now (missing, read-only, full), null when it can
   * be written. The writes above throw the same RepositoryVolumeError when that is why they failed.
   */
  problem(): Promise<RepositoryVolumeError | null>;
}
