import fs from 'node:fs';
import { promisify } from 'node:util';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { deflateSync, inflateSync } from 'node:zlib';

/**
 * Git's object format, written and read in this process. Spawning `git hash-object` or
 * `commit-tree` costs milliseconds per object; a loose object is a zlib stream of
 * "<type> <size>\0<content>" named by the SHA-1 of that, which Node writes in microseconds.
 * Objects in packs (after `git gc`) are not read here: readers answer null and the caller asks
 * the git CLI, which reads every format git has.
 *
 * The files are small and the calls synchronous, but for the fsync: on two busy cores each
 * asynchronous call waited about half a millisecond for a thread of the pool, ten times what the
 * call itself takes, and a restore made a dozen of them.
 */
const fsync = promisify(fs.fsync);
export type ObjectType = 'blob' | 'tree' | 'commit';

export interface GitObject {
  type: ObjectType;
  content: Buffer;
}

export interface TreeEntry {
  /** `100644` for a file, `40000` for a directory, as git writes them in a tree object. */
  mode: '100644' | '40000';
  name: string;
  sha: string;
}

export function objectId(type: ObjectType, content: Buffer): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

export const objectPath = (gitDir: string, sha: string) => path.join(gitDir, 'objects', sha.slice(0, 2), sha.slice(2));

/**
 * Freshens an object already there, and says whether it was: `git gc --prune` judges an
 * unreferenced object's age by its file's time, and the caller is about to reference it.
 */
export function freshenObject(target: string, now: Date): boolean {
  try {
    fs.utimesSync(target, now, now);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return false;
  }
}

/**
 * A loose object's bytes written to a temporary file beside its name, not yet fsynced nor
 * renamed: the caller fsyncs, closes and renames it (one object, or a tree's objects together).
 * A write that fails (a full disk stops it halfway) leaves no file behind.
 */
export function writeTempObject(target: string, type: ObjectType, content: Buffer): { fd: number; temp: string } {
  const dir = path.dirname(target);
  const temp = path.join(dir, `tmp_obj_${randomBytes(6).toString('hex')}`);
  let fd: number;
  try {
    fd = fs.openSync(temp, 'wx', 0o444);
  } catch (err) {
    // The first object of its fan-out directory (objects/ab/).
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(dir, { recursive: true });
    fd = fs.openSync(temp, 'wx', 0o444);
  }
  try {
    fs.writeFileSync(fd, deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content])));
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw err;
  }
  return { fd, temp };
}

/**
 * Writes a loose object as git does (a temporary file, fsynced, then renamed into place:
 * `core.fsync=committed`), and returns its id. One already there is only freshened.
 */
export async function writeObject(gitDir: string, type: ObjectType, content: Buffer): Promise<string> {
  const sha = objectId(type, content);
  const target = objectPath(gitDir, sha);
  if (freshenObject(target, new Date())) return sha;
  const { fd, temp } = writeTempObject(target, type, content);
  try {
    await fsync(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  // Same bytes under the same name: a concurrent writer's rename of its own copy is harmless.
  try {
    fs.renameSync(temp, target);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
  return sha;
}

/** A loose object, or null when it is not one (absent, or only in a pack). */
export async function readLooseObject(gitDir: string, sha: string): Promise<GitObject | null> {
  let raw: Buffer;
  try {
    raw = inflateSync(fs.readFileSync(objectPath(gitDir, sha)));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const nul = raw.indexOf(0);
  const [type, size] = raw.subarray(0, nul).toString('latin1').split(' ');
  const content = raw.subarray(nul + 1);
  if ((type !== 'blob' && type !== 'tree' && type !== 'commit') || Number(size) !== content.length) {
    throw new Error(`object ${sha} is not a blob, tree or commit of its stated size`);
  }
  return { type, content };
}

/** A tree object's bytes, its entries in git's order (a directory sorts as if its name ended in `/`). */
export function encodeTree(entries: readonly TreeEntry[]): Buffer {
  const key = (e: TreeEntry) => Buffer.from(e.mode === '40000' ? `${e.name}/` : e.name, 'utf8');
  const sorted = [...entries].sort((a, b) => Buffer.compare(key(a), key(b)));
  return Buffer.concat(sorted.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`, 'utf8'), Buffer.from(e.sha, 'hex')]));
}

export function parseTree(content: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let pos = 0;
  while (pos < content.length) {
    const space = content.indexOf(0x20, pos);
    const nul = content.indexOf(0, space);
    const mode = content.subarray(pos, space).toString('latin1');
    if (mode !== '100644' && mode !== '40000') throw new Error(`unexpected tree entry mode ${mode}`);
    entries.push({ mode, name: content.subarray(space + 1, nul).toString('utf8'), sha: content.subarray(nul + 1, nul + 21).toString('hex') });
    pos = nul + 21;
  }
  return entries;
}

export interface CommitFields {
  tree: string;
  parent: string | null;
  /** "Name <email>", author and committer alike. */
  identity: string;
  timeSeconds: number;
  message: string;
}

/** Byte for byte what `git commit-tree` writes for these fields (UTC dates, the message as given). */
export function encodeCommit(c: CommitFields): Buffer {
  const stamp = `${c.identity} ${c.timeSeconds} +0000`;
  const parent = c.parent ? `parent ${c.parent}\n` : '';
  return Buffer.from(`tree ${c.tree}\n${parent}author ${stamp}\ncommitter ${stamp}\n\n${c.message}`, 'utf8');
}

/**
 * A commit's headers (up to the blank line) and its message. Each field is decoded from the bytes
 * on its own, not sliced from one decoded text: parsed commits are remembered
 * (src/git/git-storage.ts), and a slice would keep the whole text alive with it.
 */
export function parseCommit(content: Buffer): { tree: string; parents: string[]; message: string } {
  const blank = content.indexOf('\n\n');
  const end = blank < 0 ? content.length : blank;
  let tree: string | undefined;
  const parents: string[] = [];
  for (let at = 0; at < end;) {
    const eol = content.indexOf(0x0a, at);
    const lineEnd = eol < 0 || eol > end ? end : eol;
    const space = content.indexOf(0x20, at);
    if (space > at && space < lineEnd) {
      const key = content.toString('latin1', at, space);
      if (key === 'tree' && tree === undefined) tree = content.toString('latin1', space + 1, lineEnd);
      else if (key === 'parent') parents.push(content.toString('latin1', space + 1, lineEnd));
    }
    at = lineEnd + 1;
  }
  if (!tree) throw new Error('commit without a tree');
  return { tree, parents, message: blank < 0 ? '' : content.toString('utf8', blank + 2) };
}
