import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judge, robustSlope, slope, withLeak, type Limit, type Sample } from './soak-stats.js';

/** The soak's judge (test/faults/soak-stats.ts) on made-up samples: a leak fails, one collector's spike does not. */
const LIMIT: Limit = { per1000Requests: 0.5, perHour: 20, growth: 30 };
const UNJUDGED: Limit = { per1000Requests: Infinity, perHour: Infinity, growth: Infinity };

/** An hour of flat samples, a minute apart, 6000 requests a minute, the heap around 80 MB. */
function flatHour(): Sample[] {
  return Array.from({ length: 50 }, (_, i) => ({
    t: 600 + i * 60,
    requests: 60_000 + i * 6000,
    rssMb: 220,
    heapMb: 80 + ((i * 7) % 5) - 2,
    retainedHeapMb: 70,
    fds: 45,
    dbConnections: 8,
    loopP99Ms: 30,
    loopMaxMs: 60,
  }));
}

test('a steady leak is measured at its full rate and fails the limits', () => {
  const leaky = withLeak(flatHour(), 'heapMb', 0.001); // 1 MB per 1000 requests
  const v = judge(leaky, 'heapMb', LIMIT);
  assert.ok(Math.abs(v.per1000Requests - 1) < 0.05, String(v.per1000Requests));
  assert.equal(v.ok, false);
});

test('one sample full of garbage near the end does not make growth of a flat heap; least squares would have', () => {
  const samples = flatHour();
  samples[samples.length - 3]!.heapMb = 167;
  const v = judge(samples, 'heapMb', LIMIT);
  assert.ok(Math.abs(v.perHour) < 2, `robust slope ${v.perHour} MB an hour`);
  assert.ok(v.leastSquaresPerHour > 10, `least squares ${v.leastSquaresPerHour}`);
  assert.equal(v.ok, true);
});

test('robustSlope is the median of pairwise slopes; slope is least squares', () => {
  assert.equal(robustSlope([0, 1, 2, 3], [0, 2, 4, 6]), 2);
  assert.equal(robustSlope([0, 1, 2, 3, 4], [0, 1, 2, 3, 100]), 1);
  assert.equal(slope([0, 1, 2], [1, 1, 1]), 0);
  assert.equal(robustSlope([1], [5]), 0);
});

test('samples without the figure (the retained heap before the first major collection) are left out of its judgement', () => {
  const samples = withLeak(flatHour(), 'retainedHeapMb', 0.001);
  for (const s of samples.slice(0, 10)) s.retainedHeapMb = NaN;
  const v = judge(samples, 'retainedHeapMb', LIMIT);
  assert.ok(Math.abs(v.per1000Requests - 1) < 0.05, String(v.per1000Requests));
  assert.ok(Number.isFinite(v.first) && Number.isFinite(v.growth), JSON.stringify(v));
  assert.equal(v.ok, false);
  assert.equal(
    judge(
      flatHour().map((s, i) => (i < 10 ? { ...s, retainedHeapMb: NaN } : s)),
      'retainedHeapMb',
      LIMIT,
    ).ok,
    true,
  );
});

test('a judged figure with fewer than two known samples fails: nothing to judge it by; an unjudged one passes', () => {
  const none = flatHour().map((s, i) => ({ ...s, retainedHeapMb: i === 5 ? 70 : NaN }));
  assert.equal(judge(none, 'retainedHeapMb', LIMIT).ok, false);
  assert.equal(judge(none, 'retainedHeapMb', UNJUDGED).ok, true);
});
