import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { migrate, openDatabase } from '../../src/db/database.js';

/**
 * SQLite write transactions begin with BEGIN IMMEDIATE (src/db/database.ts). A deferred
 * transaction that reads, sees another process commit, and then writes fails with
 * SQLITE_BUSY_SNAPSHOT (a 500), which the busy timeout does not cover. The other process is a
 * second connection to the same file here (SQLite locks the same way between processes), with
 * no busy timeout so that it answers at once instead of blocking this thread. Runs on every
 * engine's run of the suite: the embedded engine is always there.
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-sqlite-tx-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('a read-then-write transaction holds the write lock from its start: another writer waits, and neither fails', async () => {
  const database = await openDatabase({ dataDir: dir });
  await migrate(database);
  const other = new SqliteDatabase(path.join(dir, 'wsp.sqlite'));
  other.pragma('busy_timeout = 0');
  try {
    const otherWrite = (key: string) => other.prepare('insert into settings (key, value) values (?, ?)').run(key, 'from the other process');
    let refused: unknown;
    await database.db.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('settings').select('key').execute();
      // Another process commits between this transaction's read and its write: it cannot,
      // as this transaction holds the write lock since its BEGIN ...
      try {
        otherWrite('other-during');
      } catch (err) {
        refused = err;
      }
      // ... so this write, decided on what was read, succeeds (a deferred BEGIN: SQLITE_BUSY_SNAPSHOT).
      await trx
        .insertInto('settings')
        .values({ key: 'mine', value: String(before.length) })
        .execute();
    });
    assert.equal((refused as { code?: string } | undefined)?.code, 'SQLITE_BUSY', 'the other writer had to wait for the transaction');
    // Once it is committed, the other process writes as usual.
    otherWrite('other-after');
    const keys = (await database.db.selectFrom('settings').select('key').where('key', 'in', ['mine', 'other-during', 'other-after']).execute()).map((r) => r.key).sort();
    assert.deepEqual(keys, ['mine', 'other-after']);
  } finally {
    other.close();
    await database.close();
  }
});

test('a transaction declared read only stays deferred: it does not hold other writers back', async () => {
  const database = await openDatabase({ dataDir: dir });
  const other = new SqliteDatabase(path.join(dir, 'wsp.sqlite'));
  other.pragma('busy_timeout = 0');
  try {
    await database.db
      .transaction()
      .setAccessMode('read only')
      .execute(async (trx) => {
        await trx.selectFrom('settings').select('key').execute();
        other.prepare('insert into settings (key, value) values (?, ?)').run('during-read-only', 'x');
      });
    assert.ok(await database.db.selectFrom('settings').select('key').where('key', '=', 'during-read-only').executeTakeFirst());
  } finally {
    other.close();
    await database.close();
  }
});
