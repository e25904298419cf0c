import { createHash } from 'node:crypto';
import type { TreeFile } from '../../git/repository-storage.js';

/**
 * `render_hash`: the SHA-256 of the rendered tree, independent of git's object format.
 * For each file, in the byte order of its UTF-8 path: the path, a NUL, the lower-case hex
 * SHA-256 of its content, a newline. The hash of that text, lower-case hex (64 characters).
 * Two renders have the same hash exactly when they produce the same paths with the same bytes,
 * which is how a restore is verified against the render it copies.
 */
export function renderHash(files: readonly TreeFile[]): string {
  const lines = files.map((f) => ({ key: Buffer.from(f.path, 'utf8'), digest: createHash('sha256').update(f.content).digest('hex') }));
  lines.sort((a, b) => Buffer.compare(a.key, b.key));
  const outer = createHash('sha256');
  for (const line of lines) {
    outer.update(line.key);
    outer.update('\0');
    outer.update(`${line.digest}\n`);
  }
  return outer.digest('hex');
}
