import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql } from 'kysely';
import { openDatabase, sqliteFile, type Database } from '../../src/db/database.js';
import type { DB } from '../../src/db/tables.js';
import { GroupCommitSqliteDriver } from '../../src/db/sqlite-driver.js';

/**
 * The SQLite driver (src/db/sqlite-driver.ts): the write transactions of one turn of the event
 * loop share one COMMIT, nobody hears of success before it, a COMMIT that fails fails them all,
 * and reads outside a transaction see committed data only. SQLite's own, whatever engine the
 * rest of the suite runs on.
 */
let dir: string;
let database: Database;
let db: Kysely<DB>;
/** Another process's view of the file: what is committed. */
let outside: Sqlite.Database;

const Statement = Object.getPrototypeOf(new Sqlite(':memory:').prepare('select 1')) as { run: (...a: unknown[]) => unknown; source: string };
let commits = 0;
const run = Statement.run;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-group-'));
  database = await openDatabase({ dataDir: dir });
  db = database.db;
  await sql`create table parents (id text primary key)`.execute(db);
  await sql`create table items (id text primary key, parent text references parents (id))`.execute(db);
  outside = new Sqlite(sqliteFile(dir), { readonly: true });
  Statement.run = function (this: { source: string }, ...args: unknown[]) {
    if (/^commit$/i.test(this.source)) commits++;
    return run.apply(this, args);
  };
});
after(async () => {
  Statement.run = run;
  outside.close();
  await database.close().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await sql`delete from items`.execute(db);
  commits = 0;
});

const insert = (k: Kysely<DB>, id: string, parent: string | null = null) => sql`insert into items (id, parent) values (${id}, ${parent})`.execute(k);
const seen = () => (outside.prepare('select id from items order by id').all() as { id: string }[]).map((r) => r.id);
const readPlain = async () => (await sql<{ id: string }>`select id from items order by id`.execute(db)).rows.map((r) => r.id);

test('the write transactions of one turn share one COMMIT; none is answered before it; their reads see the group, reads outside see committed data only', async () => {
  const settled: string[] = [];
  const during: Record<string, unknown> = {};
  const writes = ['a', 'b', 'c', 'd', 'e'].map((id) =>
    db
      .transaction()
      .execute(async (trx) => {
        await insert(trx, id);
        if (id === 'c') {
          during.settled = [...settled];
          during.outside = seen();
          during.plain = await readPlain();
          during.own = (await sql<{ id: string }>`select id from items order by id`.execute(trx)).rows.map((r) => r.id);
        }
        return id;
      })
      .then((v) => void settled.push(v)),
  );
  await Promise.all(writes);
  assert.deepEqual(during.settled, [], 'a and b were done, and not answered: their COMMIT had not happened');
  assert.deepEqual(during.outside, [], 'nothing committed while the group was open');
  assert.deepEqual(during.plain, [], 'a read outside the transaction sees committed data only (and does not wait for the writer)');
  assert.deepEqual(during.own, ['a', 'b', 'c'], 'a transaction of the group sees the work of those before it');
  assert.equal(commits, 1, 'one COMMIT for five transactions');
  assert.deepEqual(seen(), ['a', 'b', 'c', 'd', 'e']);
  assert.deepEqual(await readPlain(), ['a', 'b', 'c', 'd', 'e'], 'committed: the reader sees them at once');
});

test('a transaction that fails undoes its own work only; the others of its group commit', async () => {
  const results = await Promise.allSettled(
    ['a', 'b', 'c'].map((id) =>
      db.transaction().execute(async (trx) => {
        await insert(trx, id);
        if (id === 'b') throw new Error('b fails');
      }),
    ),
  );
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  assert.match(String((results[1] as PromiseRejectedResult).reason), /b fails/);
  assert.deepEqual(seen(), ['a', 'c']);
  assert.equal(commits, 1);
});

test('a COMMIT that fails fails every transaction of its group, nothing of it is kept, and the next group is unaffected', async () => {
  const results = await Promise.allSettled([
    db.transaction().execute(async (trx) => {
      await sql`pragma defer_foreign_keys = on`.execute(trx);
      await insert(trx, 'orphan', 'no-such-parent'); // checked at COMMIT
    }),
    db.transaction().execute((trx) => insert(trx, 'innocent')),
  ]);
  for (const r of results) {
    assert.equal(r.status, 'rejected');
    assert.match(String(r.reason), /FOREIGN KEY/);
  }
  assert.deepEqual(seen(), []);
  await db.transaction().execute((trx) => insert(trx, 'after'));
  assert.deepEqual(seen(), ['after']);
});

test('a transaction SQLite rolled back whole fails the transactions of the group before it; the next one starts a group of its own', async () => {
  const results = await Promise.allSettled([
    db.transaction().execute((trx) => insert(trx, 'a')),
    db.transaction().execute(async (trx) => {
      await insert(trx, 'b');
      // As SQLite does by itself on SQLITE_FULL or SQLITE_IOERR: the whole transaction is gone.
      await sql`rollback`.execute(trx);
      throw new Error('b ended');
    }),
    db.transaction().execute((trx) => insert(trx, 'c')),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected', 'fulfilled'],
  );
  assert.match(String((results[0] as PromiseRejectedResult).reason), /rolled back/, 'a was never committed: it is not answered as if it were');
  assert.match(String((results[1] as PromiseRejectedResult).reason), /b ended/);
  assert.deepEqual(seen(), ['c']);
  assert.equal(commits, 1, "c's group");
});

test('a write of rows outside a transaction joins the open group and is answered after its COMMIT; one that fails waits for it too', async () => {
  const rows = db as unknown as Kysely<{ items: { id: string; parent: string | null } }>;
  const settled: string[] = [];
  const during: Record<string, unknown> = {};
  await Promise.all([
    rows
      .insertInto('items')
      .values({ id: 'b', parent: null })
      .execute()
      .then(() => void settled.push('b')),
    db.transaction().execute(async (trx) => {
      await insert(trx, 'c');
      during.outside = seen();
      during.settled = [...settled];
    }),
    rows
      .insertInto('items')
      .values({ id: 'c', parent: null })
      .execute()
      .catch((err: Error) => {
        // Failed on c's row, not yet committed when it ran: when its error arrives, c's row is
        // committed, so a caller looking for the row that stood in its way finds it.
        during.error = err.message;
        during.outsideAtError = seen();
      }),
  ]);
  assert.deepEqual(during.outside, [], 'b was done before c began, and not committed: it is in the group');
  assert.deepEqual(during.settled, [], 'nor answered');
  assert.match(String(during.error), /UNIQUE/);
  assert.deepEqual(during.outsideAtError, ['b', 'c'], 'the group had committed when the failed write was answered');
  assert.equal(commits, 1, 'one COMMIT for the lone writes and the transaction');
});

test('SQL written by hand outside a transaction runs alone, after the open group commits, and is committed when answered', async () => {
  let groupDone = false;
  const group = db
    .transaction()
    .execute((trx) => insert(trx, 'a'))
    .then(() => (groupDone = true));
  await insert(db, 'z');
  assert.equal(groupDone, true, 'the group committed before the lone write ran');
  assert.deepEqual(seen(), ['a', 'z']);
  await group;
});

test('a read-only transaction commits the open group first and reads it', async () => {
  const group = db.transaction().execute((trx) => insert(trx, 'a'));
  const rows = await db
    .transaction()
    .setAccessMode('read only')
    .execute(async (trx) => (await sql<{ id: string }>`select id from items`.execute(trx)).rows);
  assert.deepEqual(rows, [{ id: 'a' }]);
  await group;
});

/** A SQLite file of its own with the items table, open through one handle; removed after `fn`. */
async function withOwnFile(fn: (own: string, first: Database) => Promise<void>): Promise<void> {
  const own = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-group-own-'));
  try {
    const first = await openDatabase({ dataDir: own });
    await sql`create table items (id text primary key, parent text)`.execute(first.db);
    await fn(own, first);
  } finally {
    fs.rmSync(own, { recursive: true, force: true });
  }
}

/**
 * Starts a write transaction inserting `id` and resolves once the insert is done, so its group is
 * open; `holdMs`: how long the transaction then keeps the writer. `done` settles with it.
 */
async function openGroup(k: Kysely<DB>, id: string, holdMs = 0): Promise<{ done: Promise<void> }> {
  let inserted!: () => void;
  const inGroup = new Promise<void>((resolve) => (inserted = resolve));
  const done = k.transaction().execute(async (trx) => {
    await insert(trx, id);
    inserted();
    if (holdMs) await new Promise((r) => setTimeout(r, holdMs));
  });
  await inGroup;
  return { done };
}

const ids = async (k: Kysely<DB>) => (await sql<{ id: string }>`select id from items order by id`.execute(k)).rows.map((r) => r.id);

test('closing the database commits the open group first', () =>
  withOwnFile(async (own, other) => {
    const { done } = await openGroup(other.db, 'closing');
    await other.close();
    await done;
    const file = new Sqlite(sqliteFile(own), { readonly: true });
    assert.deepEqual(file.prepare('select id from items').all(), [{ id: 'closing' }]);
    file.close();
  }));

test('every handle of one file in a process shares its writer: their writes of one turn share a COMMIT, none waits for the other', { timeout: 20_000 }, async () => {
  const second = await openDatabase({ dataDir: dir });
  const started = Date.now();
  try {
    // With a writer each, the second handle's BEGIN waited for the first's group to end its turn,
    // blocking that very turn: 5 s of busy timeout, then SQLITE_BUSY.
    await Promise.all(['a', 'b', 'c', 'd'].map((id, i) => (i % 2 ? second.db : db).transaction().execute((trx) => insert(trx, id))));
    assert.ok(Date.now() - started < 2000, `the writes took ${Date.now() - started} ms`);
    assert.equal(commits, 1);
    assert.deepEqual(seen(), ['a', 'b', 'c', 'd']);
  } finally {
    await second.close();
  }
  // The first handle still writes and reads through the shared connections.
  await insert(db, 'e');
  assert.deepEqual(await readPlain(), ['a', 'b', 'c', 'd', 'e']);
});

test('the file is closed when its last handle closes, not before', () =>
  withOwnFile(async (own, first) => {
    // SQLite removes the WAL when the file's last connection closes.
    const wal = `${sqliteFile(own)}-wal`;
    const second = await openDatabase({ dataDir: own });
    await first.close();
    assert.ok(fs.existsSync(wal), 'still open for the second handle');
    await insert(second.db, 'after-first-closed');
    assert.deepEqual(await ids(second.db), ['after-first-closed']);
    await second.close();
    assert.ok(!fs.existsSync(wal), 'closed with its last handle');
    const again = await openDatabase({ dataDir: own });
    assert.deepEqual(await ids(again.db), ['after-first-closed']);
    await again.close();
  }));

test('a handle opened while the last one is closing waits for its group to commit and its writer to close, rather than writing beside it', { timeout: 20_000 }, () =>
  withOwnFile(async (own, first) => {
    // A transaction in its group, holding the writer and the write lock for 50 ms.
    const { done } = await openGroup(first.db, 'before-close', 50);
    // The close waits for that transaction, then commits its group; it is not awaited here.
    const closing = first.close();
    // Time for the close to release the handle; its writer still waits for that transaction.
    await new Promise((r) => setTimeout(r, 10));
    const started = Date.now();
    const second = await openDatabase({ dataDir: own });
    // With a writer of its own beside the closing one, this BEGIN waited out the busy timeout (5 s, then SQLITE_BUSY).
    await insert(second.db, 'after-reopen');
    assert.ok(Date.now() - started < 2000, `the reopened handle waited ${Date.now() - started} ms`);
    await Promise.all([done, closing]);
    assert.deepEqual(await ids(second.db), ['after-reopen', 'before-close']);
    await second.close();
  }),
);

test('the rollback Kysely sends after a failed COMMIT touches nothing: by then the writer may hold the next group', async () => {
  const file = sqliteFile(dir);
  const driver = new GroupCommitSqliteDriver(new Sqlite(file), new Sqlite(file));
  const raw = (q: string) => CompiledQuery.raw(q);
  try {
    const a = await driver.acquireConnection();
    await driver.beginTransaction(a, {});
    await a.executeQuery(raw('pragma defer_foreign_keys = on'));
    await a.executeQuery(raw("insert into items (id, parent) values ('orphan', 'no-such-parent')"));
    const committing = driver.commitTransaction(a);
    await assert.rejects(committing, /FOREIGN KEY/, 'its group’s COMMIT failed at the end of the turn');
    // The next group opens before Kysely's rollback of the failed one arrives.
    const b = await driver.acquireConnection();
    await driver.beginTransaction(b, {});
    await b.executeQuery(raw("insert into items (id) values ('next')"));
    await driver.rollbackTransaction(a);
    await driver.releaseConnection(a);
    await driver.commitTransaction(b);
    await driver.releaseConnection(b);
    assert.deepEqual(seen(), ['next']);
  } finally {
    await driver.destroy();
  }
});

test('a write refused its lock (another process holds it) fails, and the writer goes on to the next', { timeout: 10_000 }, async () => {
  const file = sqliteFile(dir);
  // No busy timeout: the refusal is immediate.
  const driver = new GroupCommitSqliteDriver(new Sqlite(file, { timeout: 0 }), new Sqlite(file, { timeout: 0 }));
  const k = new Kysely<{ items: { id: string; parent: string | null } }>({
    dialect: { createDriver: () => driver, createAdapter: () => new SqliteAdapter(), createIntrospector: (d) => new SqliteIntrospector(d), createQueryCompiler: () => new SqliteQueryCompiler() },
  });
  const blocker = new Sqlite(file);
  try {
    blocker.exec('begin immediate');
    await assert.rejects(k.insertInto('items').values({ id: 'lone', parent: null }).execute(), /locked|busy/i);
    await assert.rejects(
      k.transaction().execute((trx) => trx.insertInto('items').values({ id: 'tx', parent: null }).execute()),
      /locked|busy/i,
    );
    blocker.exec('rollback');
    await k.insertInto('items').values({ id: 'after', parent: null }).execute();
    await k.transaction().execute((trx) => trx.insertInto('items').values({ id: 'after-tx', parent: null }).execute());
    assert.deepEqual(seen(), ['after', 'after-tx']);
  } finally {
    blocker.close();
    await k.destroy();
  }
});
