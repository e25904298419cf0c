import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { countingStatements } from '../helpers/statements.js';
import { MAX_LISTS_A_STATEMENT, listVersions } from '../../src/db/list-version-rows.js';

/**
 * The list versions the list cache reads (src/http/list-cache.ts) for the requests of one turn of
 * the event loop are one statement (src/db/list-version-rows.ts): each lookup gets the versions of
 * its own lists, in its order, and nothing outlives the statement, so a version bumped before a
 * lookup starts is the one it reads. Before the change each lookup was a statement of its own (the
 * counts below fail on that code: 5, 50 and 3 statements where they expect 1, 2 and 1).
 */
let tdb: TestDatabase;
before(async () => {
  tdb = await openTestDatabase();
  await tdb.database.db
    .insertInto('list_versions')
    .values([
      { list: 'lvr:a', version: 3 },
      { list: 'lvr:b', version: 7 },
    ])
    .execute();
});
after(() => tdb.cleanup());

test("the lookups of one turn: one statement, each its own lists' versions in its order, 0 for a list never written", async () => {
  const c = countingStatements(tdb.database.db);
  const asked = [['lvr:a'], ['lvr:b', 'lvr:a'], ['lvr:none'], ['lvr:a', 'lvr:none', 'lvr:b'], ['lvr:b']];
  const got = await Promise.all(asked.map((lists) => listVersions(c.db, lists)));
  assert.equal(c.statements(), 1);
  assert.deepEqual(got, [
    [['lvr:a', 3]],
    [
      ['lvr:b', 7],
      ['lvr:a', 3],
    ],
    [['lvr:none', 0]],
    [
      ['lvr:a', 3],
      ['lvr:none', 0],
      ['lvr:b', 7],
    ],
    [['lvr:b', 7]],
  ]);
});

test('more lists in one turn than one statement takes: every lookup answered', async () => {
  const c = countingStatements(tdb.database.db);
  const asked = Array.from({ length: 50 }, (_, i) => [`lvr:many${i}`, i % 2 ? 'lvr:a' : `lvr:other${i}`]);
  const got = await Promise.all(asked.map((lists) => listVersions(c.db, lists)));
  // 50 lookups of two lists, 76 lists in all (lvr:a once a statement): two statements of at most 64.
  assert.equal(MAX_LISTS_A_STATEMENT, 64);
  assert.equal(c.statements(), 2);
  assert.deepEqual(
    got,
    asked.map((lists) => lists.map((l) => [l, l === 'lvr:a' ? 3 : 0])),
  );
});

test('a version bumped before a lookup starts is the one read, though the list was read a turn before', async () => {
  const db = tdb.database.db;
  assert.deepEqual(await listVersions(db, ['lvr:bumped']), [['lvr:bumped', 0]]);
  await db.insertInto('list_versions').values({ list: 'lvr:bumped', version: 1 }).execute();
  assert.deepEqual(await listVersions(db, ['lvr:bumped']), [['lvr:bumped', 1]]);
  await db.updateTable('list_versions').set({ version: 2 }).where('list', '=', 'lvr:bumped').execute();
  assert.deepEqual(await listVersions(db, ['lvr:bumped']), [['lvr:bumped', 2]]);
});

test('a statement that fails fails every lookup it was to answer', async () => {
  const c = countingStatements(tdb.database.db, true);
  const results = await Promise.allSettled([['lvr:a'], ['lvr:b'], ['lvr:a', 'lvr:b']].map((lists) => listVersions(c.db, lists)));
  assert.equal(c.statements(), 1);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected', 'rejected'],
  );
});
