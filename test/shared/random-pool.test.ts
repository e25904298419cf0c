import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pooledRandom } from '../../src/shared/random-pool.js';
import { newEtag } from '../../src/shared/etag.js';

/** Ids, etags and claim tokens draw their random bytes from one pool (src/shared/random-pool.ts). */

test('no byte of the pool is handed out twice: consecutive draws are disjoint, across the refill of a page too', () => {
  const seen = new Set<string>();
  // 12-byte draws over several 4 KiB pages: a repeat of a whole draw would mean bytes reused.
  for (let i = 0; i < 3000; i++) {
    const draw = pooledRandom(12, (bytes, start) => bytes.toString('hex', start, start + 12));
    assert.equal(draw.length, 24);
    assert.ok(!seen.has(draw), `draw ${i} repeats an earlier one`);
    seen.add(draw);
  }
  // A draw larger than what is left of the page gets a fresh page, whole.
  const big = pooledRandom(4000, (bytes, start) => Buffer.from(bytes.subarray(start, start + 4000)));
  const next = pooledRandom(4000, (bytes, start) => Buffer.from(bytes.subarray(start, start + 4000)));
  assert.equal(big.length, 4000);
  assert.equal(next.length, 4000);
  assert.notDeepEqual(big, next);
});

test('an etag is 12 random bytes in base64url, each one new, every character used about as often', () => {
  const etags = Array.from({ length: 20_000 }, () => newEtag());
  for (const e of etags.slice(0, 100)) assert.match(e, /^[A-Za-z0-9_-]{16}$/);
  assert.equal(new Set(etags).size, etags.length);
  const counts = new Map<string, number>();
  for (const e of etags) for (const c of e) counts.set(c, (counts.get(c) ?? 0) + 1);
  assert.equal(counts.size, 64);
  const expected = (etags.length * 16) / 64;
  for (const [c, n] of counts) assert.ok(Math.abs(n - expected) < expected * 0.2, `${c}: ${n} against about ${expected}`);
});
