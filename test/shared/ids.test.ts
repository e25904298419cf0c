import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { idAt, idFloor, newId, timeOfId, ulid } from '../../src/shared/ids.js';

describe('ids', () => {
  test('a ULID is 26 lower-case Crockford characters, the first ten the time', () => {
    const at = Date.UTC(2026, 10, 23, 12, 0, 0);
    const id = ulid(at);
    assert.match(id, /^[0-9abcdefghjkmnpqrstvwxyz]{26}$/);
    let ms = 0;
    for (const c of id.slice(0, 10)) ms = ms * 32 + '0123456789abcdefghjkmnpqrstvwxyz'.indexOf(c);
    assert.equal(ms, at);
    assert.match(newId('sec'), /^sec_[0-9a-z]{26}$/);
  });

  test('100,000 ids in a burst are distinct and sort in the order they were made', () => {
    const ids = Array.from({ length: 100_000 }, () => ulid());
    assert.equal(new Set(ids).size, ids.length);
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} < ${ids[i]}`);
  });

  test('the random part is drawn afresh for each new millisecond, every digit used about as often', () => {
    const counts = new Map<string, number>();
    const randoms = new Set<string>();
    for (let ms = 1; ms <= 4000; ms++) {
      const random = ulid(Date.UTC(2030, 0, 1) + ms).slice(10);
      randoms.add(random);
      for (const c of random) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    assert.equal(randoms.size, 4000, 'no random part repeats');
    assert.equal(counts.size, 32, 'all 32 digits occur');
    // 64,000 digits: 2,000 expected per digit; a biased or stuck source lands far outside this.
    for (const [digit, n] of counts) assert.ok(n > 1700 && n < 2300, `digit ${digit}: ${n}`);
  });
});

describe('the time in an id', () => {
  test('timeOfId reads back the millisecond an id was made at; idFloor sorts at or before every id of that millisecond and after every earlier one', () => {
    // Later and later times, after those of the tests above: ulid() is monotonic, an earlier time
    // would be moved up to the last one used.
    const now = Date.UTC(2031, 0, 1);
    for (const ms of [now + 5, now + 1000, now + 86_400_000]) {
      const id = `ntf_${ulid(ms)}`;
      assert.equal(timeOfId(id), ms);
      assert.ok(idFloor('ntf', ms) <= id, `${ms}: floor <= id`);
      assert.ok(idFloor('ntf', ms + 1) > id, `${ms}: the next floor is after it`);
    }
  });
});

test('idAt: the id of a moment is made at that moment, after a later one too; within one millisecond they still sort in order', () => {
  const t = Date.UTC(2026, 10, 29, 12);
  const later = idAt('evt', t + 3_600_000);
  const a = idAt('evt', t);
  const b = idAt('evt', t);
  const c = idAt('evt', t + 1);
  assert.equal(timeOfId(later), t + 3_600_000);
  // ulid() would have made these at the later time (it never moves back): a time filter would miss them.
  assert.equal(timeOfId(a), t);
  assert.equal(timeOfId(b), t);
  assert.ok(a < b && b < c, `${a} ${b} ${c}`);
  assert.ok(a >= idFloor('evt', t) && c < idFloor('evt', t + 2));
});
