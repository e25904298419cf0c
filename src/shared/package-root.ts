import fs from 'node:fs';
import path from 'node:path';

/**
 * The package's root folder, found by walking up from this module to the first package.json:
 * the same answer when bundled (dist/wsp.cjs) and when run from the sources by tsx.
 */
export function packageRoot(): string {
  let dir = path.dirname(new URL(import.meta.url).pathname);
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** The version of this package (package.json), which `wsp --version` prints. */
export function packageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
