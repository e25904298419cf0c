import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { setTimeout as sleep } from 'node:timers/promises';
import { retainedHeapBytes, watchRetainedHeap } from '../../src/http/retained-heap.js';
import { createTestApp } from '../helpers/harness.js';

// A full collection on demand, without starting the test process with --expose-gc.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/**
 * A major collection, then its figure once the observer has been told of it (a turn or two
 * later): the value changes, since something is always allocated between two collections.
 */
async function collected(): Promise<number> {
  const before = retainedHeapBytes();
  gc();
  const deadline = Date.now() + 5000;
  for (;;) {
    await sleep(5);
    const bytes = retainedHeapBytes();
    if (bytes !== null && bytes !== before) return bytes;
    if (Date.now() > deadline) throw new Error('no major collection observed');
  }
}

test('the retained heap follows what is held across major collections, not the garbage between them', async () => {
  watchRetainedHeap();
  const base = await collected();
  let held: number[][] = Array.from({ length: 40 }, () => new Array<number>(100_000).fill(1.5)); // about 32 MB on the heap
  const holding = await collected();
  assert.ok(holding - base > 25 * 1024 * 1024, `holding 32 MB: ${base} -> ${holding}`);
  // Garbage made and dropped without a collection does not move it.
  for (let i = 0; i < 20; i++) void new Array<number>(100_000).fill(2.5);
  assert.equal(retainedHeapBytes(), holding);
  held = [];
  const released = await collected();
  assert.ok(holding - released > 25 * 1024 * 1024, `released: ${holding} -> ${released}`);
  assert.equal(held.length, 0);
});

test('/metrics of a server process reports it (wsp_heap_retained_bytes)', async () => {
  const h = await createTestApp({ processMetrics: true });
  try {
    await collected();
    const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    const value = Number(/^wsp_heap_retained_bytes (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(text)?.[1]);
    assert.ok(value > 1024 * 1024, `wsp_heap_retained_bytes ${value}`);
    assert.equal(value, retainedHeapBytes());
  } finally {
    await h.close();
  }
});
