import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDatabaseUnavailable, isStorageFull, isTemporarilyRefused } from '../../src/db/unavailable.js';

const err = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('a database that is gone, a full disk, and a query refused for what it is, told apart', () => {
  const cases: [unknown, boolean, boolean][] = [
    [err('ECONNREFUSED'), true, false],
    [err('57P01'), true, false],
    [err('SQLITE_BUSY'), true, false],
    [Object.assign(new Error('agg'), { errors: [err('ECONNREFUSED'), err('ETIMEDOUT')] }), true, false],
    [new Error('Connection terminated unexpectedly'), true, false],
    [err('SQLITE_FULL'), false, true],
    [err('53100'), false, true],
    [err('ENOSPC'), false, true],
    [err('23505'), false, false],
    [err('SQLITE_CONSTRAINT_UNIQUE'), false, false],
    [err('XX000', 'Connection terminated'), false, false], // a message of a lost connection, but a server's code: refused, not lost
    [null, false, false],
    ['ECONNREFUSED', false, false],
  ];
  for (const [e, unavailable, full] of cases) {
    assert.deepEqual([isDatabaseUnavailable(e), isStorageFull(e), isTemporarilyRefused(e)], [unavailable, full, unavailable || full], String((e as { code?: string })?.code ?? e));
  }
});
