import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { prepared } from '../../src/db/prepared.js';

/**
 * Queries compiled once and run with each call's values (src/db/prepared.ts), on this engine:
 * every call gets its own values (never the first call's), in a transaction too, and a query
 * that does not use each argument exactly once as a value is refused rather than run wrong.
 */
let tdb: TestDatabase;
before(async () => {
  tdb = await openTestDatabase();
  const db = tdb.database.db;
  await db.insertInto('workspaces').values([0, 1, 2].map((i) => ({ id: `ws_p${i}`, name: `P${i}`, created_at: 1000 + i, updated_at: 1000 + i, etag: `e${i}` }))).execute();
});
after(() => tdb.cleanup());

const byName = prepared((db, name: string) => db.selectFrom('workspaces').select(['id', 'name']).where('name', '=', name));
const newestBelow = prepared((db, before: number, take: number) =>
  db.selectFrom('workspaces').select('id').where('created_at', '<', before).where('id', 'like', 'ws_p%').orderBy('created_at', 'desc').limit(take),
);

describe('prepared queries', () => {
  test('each call runs with its own values', async () => {
    const db = tdb.database.db;
    assert.deepEqual(await byName.first(db, 'P1'), { id: 'ws_p1', name: 'P1' });
    assert.deepEqual(await byName.first(db, 'P2'), { id: 'ws_p2', name: 'P2' });
    assert.equal(await byName.first(db, 'nobody'), undefined);
    assert.deepEqual(await newestBelow.all(db, 1002, 5), [{ id: 'ws_p1' }, { id: 'ws_p0' }]);
    assert.deepEqual(await newestBelow.all(db, 1003, 1), [{ id: 'ws_p2' }], 'the constant of the query (like) stays, both arguments change');
  });

  test('inside a transaction, on its connection', async () => {
    await tdb.database.db.transaction().execute(async (trx) => {
      await trx.updateTable('workspaces').set({ name: 'Renamed' }).where('id', '=', 'ws_p0').execute();
      assert.deepEqual(await byName.first(trx, 'Renamed'), { id: 'ws_p0', name: 'Renamed' }, 'sees the transaction’s own write');
    });
  });

  test('an argument used twice, not at all, or not as a value is refused', async () => {
    const db = tdb.database.db;
    const twice = prepared((d, name: string) => d.selectFrom('workspaces').select('id').where('name', '=', name).where('id', '=', name));
    await assert.rejects(twice.all(db, 'x'), /argument 0 must appear exactly once/);
    const unused = prepared((d, _name: string) => d.selectFrom('workspaces').select('id'));
    await assert.rejects(unused.all(db, 'x'), /argument 0 must appear exactly once/);
    const inlined = prepared((d, name: string) => d.selectFrom('workspaces').select('id').where(sql.lit(String(name)), '=', 'x'));
    await assert.rejects(inlined.all(db, 'x'), /argument 0 must appear exactly once/);
  });
});
