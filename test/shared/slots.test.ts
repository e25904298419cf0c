import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Slots } from '../../src/shared/slots.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('at most `size` at once, the rest in arrival order; a failure frees its slot', async () => {
  const slots = new Slots(2);
  let running = 0;
  let most = 0;
  const order: number[] = [];
  const work = (i: number, fail = false) =>
    slots.run(async () => {
      running++;
      most = Math.max(most, running);
      order.push(i);
      for (let k = 0; k < 3; k++) await tick();
      running--;
      if (fail) throw new Error(`work ${i} failed`);
      return i;
    });
  const results = await Promise.allSettled([work(0), work(1, true), work(2), work(3), work(4)]);
  assert.equal(most, 2);
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled'],
  );
  assert.equal(await work(5), 5, 'every slot came back');
});

test('one slot: the work of each waits for the one before', async () => {
  const slots = new Slots(1);
  const log: string[] = [];
  await Promise.all(
    ['a', 'b', 'c'].map((x) =>
      slots.run(async () => {
        log.push(`${x}+`);
        await tick();
        log.push(`${x}-`);
      }),
    ),
  );
  assert.deepEqual(log, ['a+', 'a-', 'b+', 'b-', 'c+', 'c-']);
});

/** Work of `ms` on `slots`, recording when each began and ended. */
function timedWork(slots: Slots) {
  const starts: number[] = [];
  const ends: number[] = [];
  const work = (ms: number) =>
    slots.run(async () => {
      starts.push(performance.now());
      await new Promise((r) => setTimeout(r, ms));
      ends.push(performance.now());
    });
  return { starts, ends, work };
}

test('restAfter: a slot handed to work in line rests first for that share of the time the work before took; a free slot starts at once', async () => {
  const { starts, ends, work } = timedWork(new Slots(1, 0.5));
  await Promise.all([work(100), work(10)]);
  const rest = starts[1]! - ends[0]!;
  assert.ok(rest >= 45, `rested ${rest.toFixed(1)} ms after 100 ms of work`);
  // Nobody in line: the slot is freed, and the next work starts without a rest: before run() even
  // returns (no timer, no turn of the event loop; a bound in milliseconds also measured the machine's load).
  const next = work(1);
  assert.equal(starts.length, 3, 'the work started as it was asked');
  await next;
});

test('restAfter: the rest is at most maxRestMs, however long the work before took', async (t) => {
  // The rest the slot asks of the timer: what it waited beyond that is the machine's load.
  const timers = t.mock.method(globalThis, 'setTimeout');
  const { starts, ends, work } = timedWork(new Slots(1, 0.5, 20));
  await Promise.all([work(600), work(1)]);
  const rest = starts[1]! - ends[0]!;
  assert.ok(rest >= 15, `rested ${rest.toFixed(1)} ms after 600 ms of work`);
  const asked = timers.mock.calls.map((c) => c.arguments[1]).filter((ms) => ms !== 600 && ms !== 1);
  assert.deepEqual(asked, [20], 'the rest asked: at most 20 ms (300 without the bound)');
});
