import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { HEADER_FIRST_KEYS } from '../../src/http/header-first-keys.js';

/**
 * Headers objects and Node's hash states start as `{}`. Once the empty object's map holds V8's
 * 1,536 transitions (compiling the route schemas fills it), an empty object whose first key has
 * no transition yet gets a new map for every property added to it (src/http/header-first-keys.ts).
 * Each case runs in a process of its own, where nothing made a headers object or a hash before.
 */
const probe = path.join(REPO_ROOT, 'test/fixtures/hidden-classes/first-keys-probe.ts');
const run = (mode: 'hold' | 'none') => JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', probe, mode], { encoding: 'utf8' })) as { headers: Record<string, number>; hash: number };

test('with the first keys held before the map fills, headers objects and hashes keep one hidden class', () => {
  const held = run('hold');
  for (const key of HEADER_FIRST_KEYS) assert.equal(held.headers[key], 0, key);
  assert.equal(held.hash, 0, "a hash's state");
});

test('without them, the same objects made after the map filled get a new class per object', () => {
  // What makes the test above able to fail.
  const none = run('none');
  for (const key of ['etag', 'authorization', 'idempotent-replayed']) assert.ok(none.headers[key]! > 0, key);
  assert.ok(none.hash > 0, "a hash's state");
});

test('a built app holds them: once its schemas compiled and the map is full, only a key it does not hold gets a new class per object', () => {
  const probed = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'test/fixtures/hidden-classes/app-first-keys-probe.ts')], { encoding: 'utf8' })) as {
    headers: Record<string, number>;
    unheld: number;
  };
  assert.ok(probed.unheld > 0, "the empty object's map is full");
  for (const key of HEADER_FIRST_KEYS) assert.equal(probed.headers[key], 0, key);
});
