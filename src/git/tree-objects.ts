import fs from 'node:fs';
import { promisify } from 'node:util';
import { encodeTree, freshenObject, objectId, objectPath, writeTempObject, type ObjectType, type TreeEntry } from './objects.js';
import type { TreeFile } from './repository-storage.js';

const fsync = promisify(fs.fsync);

/** A tree written: its root's id, and every object of it (written or freshened), for the sizes' bookkeeping. */
export interface WrittenTree {
  tree: string;
  objects: string[];
}

interface DirEntry {
  files: Map<string, string>;
  dirs: Map<string, DirEntry>;
}

interface Pending {
  sha: string;
  type: ObjectType;
  content: Buffer;
}

/**
 * Writes a tree's blobs and trees as loose objects, all at once: every new object goes to a
 * temporary file, all of them are fsynced together (the pool's threads run the fsyncs side by
 * side), and only then renamed into place. Each object is durable before its name exists, as
 * git's `core.fsync=committed` has it, and none is named before the caller's commit and ref
 * (written after this returns) point at it. One already there is freshened instead (its time
 * decides when `git gc --prune` may drop it, and it is about to be referenced).
 *
 * Runs on a render thread (src/installs/renders/render-thread.ts) for the renders, so that the
 * hashing, deflating and synchronous file calls of a render stay off the event loop (issue 54),
 * and on the event loop for GitStorage.writeTree.
 */
export async function writeTreeObjects(gitDir: string, files: readonly TreeFile[]): Promise<WrittenTree> {
  const objects = new Map<string, Pending>();
  const add = (type: ObjectType, content: Buffer): string => {
    const sha = objectId(type, content);
    if (!objects.has(sha)) objects.set(sha, { sha, type, content });
    return sha;
  };
  const root: DirEntry = { files: new Map(), dirs: new Map() };
  for (const file of files) {
    const segments = file.path.split('/');
    const name = segments.pop()!;
    let dir = root;
    for (const seg of segments) {
      let next = dir.dirs.get(seg);
      if (!next) dir.dirs.set(seg, (next = { files: new Map(), dirs: new Map() }));
      dir = next;
    }
    dir.files.set(name, add('blob', file.content));
  }
  const writeDir = (dir: DirEntry): string => {
    const entries: TreeEntry[] = [];
    for (const [name, sha] of dir.files) entries.push({ mode: '100644', name, sha });
    for (const [name, sub] of dir.dirs) entries.push({ mode: '40000', name, sha: writeDir(sub) });
    return add('tree', encodeTree(entries));
  };
  const tree = writeDir(root);

  const now = new Date();
  const opened: { fd: number; temp: string; target: string }[] = [];
  try {
    for (const object of objects.values()) {
      const target = objectPath(gitDir, object.sha);
      if (freshenObject(target, now)) continue;
      opened.push({ ...writeTempObject(target, object.type, object.content), target });
    }
    await Promise.all(opened.map(({ fd }) => fsync(fd)));
  } catch (err) {
    // A full disk stops a write halfway: the partial files are nobody's objects.
    for (const { fd, temp } of opened) {
      fs.closeSync(fd);
      fs.rmSync(temp, { force: true });
    }
    throw err;
  }
  for (const { fd } of opened) fs.closeSync(fd);
  // Same bytes under the same name: a concurrent writer's rename of its own copy is harmless.
  for (let i = 0; i < opened.length; i++) {
    const { temp, target } = opened[i]!;
    try {
      fs.renameSync(temp, target);
    } catch (err) {
      for (const left of opened.slice(i)) fs.rmSync(left.temp, { force: true });
      throw err;
    }
  }
  return { tree, objects: [...objects.keys()] };
}
