import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AnswerCache } from '../../src/http/answer-cache.js';

const b = (text: string) => Buffer.from(text);
const text = (kept: Buffer | undefined) => kept?.toString();

test('the least recently used answers go first once the bytes kept pass the bound', () => {
  const cache = new AnswerCache(10);
  cache.set('a', b('aaaa'));
  cache.set('b', b('bbbb'));
  assert.equal(text(cache.get('a')), 'aaaa'); // a is now the most recent
  cache.set('c', b('cccc')); // 12 bytes: b goes
  assert.deepEqual([text(cache.get('a')), text(cache.get('b')), text(cache.get('c'))], ['aaaa', undefined, 'cccc']);
  assert.equal(cache.heldBytes, 8);
  cache.set('a', b('xx')); // replaced: its old bytes no longer count
  assert.deepEqual([text(cache.get('a')), cache.heldBytes, cache.size], ['xx', 6, 2]);
  cache.set('huge', b('h'.repeat(11))); // larger than the bound: not kept, nothing dropped for it
  assert.deepEqual([cache.get('huge'), cache.size], [undefined, 2]);
  cache.set('é', b('éééé')); // counted in bytes, not characters: 8 bytes, so c goes (4 characters would have fitted)
  assert.deepEqual([cache.get('c'), text(cache.get('a')), cache.heldBytes], [undefined, 'xx', 10]);
});

test('property: never more bytes than the bound; what it answers is the last answer set under that key', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('k1', 'k2', 'k3', 'k4', 'k5'), fc.string({ maxLength: 12 }), fc.boolean()), { maxLength: 60 }), (ops) => {
      const cache = new AnswerCache(20);
      const last = new Map<string, string>();
      for (const [key, text, read] of ops) {
        if (read) {
          const got = cache.get(key);
          if (got !== undefined) assert.equal(got.toString(), last.get(key));
        } else {
          cache.set(key, b(text));
          last.set(key, text);
        }
        assert.ok(cache.heldBytes <= 20);
      }
      const recent = ops.filter(([, , read]) => !read).at(-1);
      if (recent && Buffer.byteLength(recent[1]) <= 20) assert.equal(text(cache.get(recent[0])), recent[1], 'the newest answer is always kept');
    }),
  );
});

test('property: the same answers are kept as by a list in order of use (the most recent moved to the end, the first dropped)', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('k1', 'k2', 'k3', 'k4'), fc.integer({ min: 1, max: 9 }), fc.boolean()), { maxLength: 80 }), (ops) => {
      const cache = new AnswerCache(20);
      let model: [string, number][] = [];
      for (const [key, bytes, read] of ops) {
        const at = model.findIndex(([k]) => k === key);
        if (read) {
          assert.equal(cache.get(key)?.length, at >= 0 ? model[at]![1] : undefined);
          if (at >= 0) model.push(...model.splice(at, 1));
        } else {
          cache.set(key, Buffer.alloc(bytes));
          if (at >= 0) model.splice(at, 1);
          model.push([key, bytes]);
          while (model.reduce((n, [, b]) => n + b, 0) > 20) model = model.slice(1);
        }
        assert.deepEqual([cache.size, cache.heldBytes], [model.length, model.reduce((n, [, b]) => n + b, 0)]);
      }
    }),
  );
});
