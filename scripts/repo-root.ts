import fs from 'node:fs';
import path from 'node:path';

/**
 * The repository's top folder: the nearest one above this module that holds package.json.
 * Found rather than counted in `../`, because the test runner bundles this module into a chunk
 * of its own folder (scripts/build-tests.mjs), where a relative count would lead elsewhere.
 */
export function findRepoRoot(from: string = path.dirname(new URL(import.meta.url).pathname)): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const REPO_ROOT = findRepoRoot();
