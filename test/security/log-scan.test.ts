import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { valuesIn } from '../helpers/log-scan.js';

/**
 * The log scan's search (test/helpers/log-scan.ts) finds exactly what a search per value finds,
 * on both of its paths: few values (one search each) and many (one pass over the text by each
 * value's first 12 characters), values sharing a prefix, overlapping each other, at the text's
 * very start and end included.
 */
const alphabet = fc.constantFrom(...'ab_c=1'.split(''));
const value = fc.array(alphabet, { minLength: 12, maxLength: 20 }).map((cs) => cs.join(''));

test('valuesIn finds every value the text holds and no other, for few values and for many', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(value, { minLength: 1, maxLength: 150 }),
      fc.array(
        fc.oneof(
          fc.nat(),
          fc.array(alphabet, { maxLength: 30 }).map((cs) => cs.join('')),
        ),
        { maxLength: 12 },
      ),
      (values, parts) => {
        // The text: pieces of noise and some of the values themselves, so both hits and misses occur.
        const text = parts.map((p) => (typeof p === 'number' ? values[p % values.length] : p)).join('');
        const expected = values.filter((v) => text.includes(v));
        assert.deepEqual(valuesIn(text, values), expected);
      },
    ),
    { numRuns: 300 },
  );
});

test("valuesIn with many values: values at the very start and end of the text, one of the shortest length, one sharing another's first 12 characters", () => {
  const many = Array.from({ length: 100 }, (_, i) => `value-${String(i).padStart(6, '0')}-tail`);
  const twin = `${many[5]!.slice(0, 12)}-other-end`;
  const shortest = 'exactly-12ch';
  assert.equal(shortest.length, 12);
  const text = `${many[0]} ${twin} middle ${many[99]} ${shortest}`;
  assert.deepEqual(valuesIn(text, [...many, twin, shortest]), [many[0]!, many[99]!, twin, shortest]);
  assert.deepEqual(valuesIn(shortest, [...many, shortest]), [shortest]);
  assert.deepEqual(valuesIn('nothing here at all', many), []);
});
