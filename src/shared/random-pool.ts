import { randomFillSync } from 'node:crypto';

// Random bytes drawn a page at a time: one call into the CSPRNG per page, not one per id or
// etag. A write makes an id or two and as many etags, and each call of randomBytes was a
// visible cost under load (a fifth of the CPU a secret-version write spends beyond the floor's).
// For values that are not keys: ids, etags, claim tokens. Keys and credentials call randomBytes
// themselves, so that none of their bytes ever sit in a shared buffer.
const pool = Buffer.alloc(4096);
let at = pool.length;

/** Hands `read` the next `n` (at most 4096) bytes of the pool, never handed out before. */
export function pooledRandom<T>(n: number, read: (bytes: Buffer, start: number) => T): T {
  if (at + n > pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  const start = at;
  at += n;
  return read(pool, start);
}
