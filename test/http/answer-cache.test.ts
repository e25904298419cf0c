import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AnswerCache } from '../../src/http/answer-cache.js';

test('the least recently used answers go first once the text kept passes the bound', () => {
  const cache = new AnswerCache(10);
  cache.set('a', 'aaaa');
  cache.set('b', 'bbbb');
  assert.equal(cache.get('a'), 'aaaa'); // a is now the most recent
  cache.set('c', 'cccc'); // 12 characters: b goes
  assert.deepEqual([cache.get('a'), cache.get('b'), cache.get('c')], ['aaaa', undefined, 'cccc']);
  assert.equal(cache.heldChars, 8);
  cache.set('a', 'xx'); // replaced: its old text no longer counts
  assert.deepEqual([cache.get('a'), cache.heldChars, cache.size], ['xx', 6, 2]);
  cache.set('huge', 'h'.repeat(11)); // larger than the bound: not kept, nothing dropped for it
  assert.deepEqual([cache.get('huge'), cache.size], [undefined, 2]);
});

test('property: never more text than the bound; what it answers is the last text set under that key', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('k1', 'k2', 'k3', 'k4', 'k5'), fc.string({ maxLength: 12 }), fc.boolean()), { maxLength: 60 }), (ops) => {
      const cache = new AnswerCache(20);
      const last = new Map<string, string>();
      for (const [key, text, read] of ops) {
        if (read) {
          const got = cache.get(key);
          if (got !== undefined) assert.equal(got, last.get(key));
        } else {
          cache.set(key, text);
          last.set(key, text);
        }
        assert.ok(cache.heldChars <= 20);
      }
      const recent = ops.filter(([, , read]) => !read).at(-1);
      if (recent) assert.equal(cache.get(recent[0]), recent[1], 'the newest answer is always kept');
    }),
  );
});
