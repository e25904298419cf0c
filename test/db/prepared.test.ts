import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ENGINE, openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { prepared, preparedInsert } from '../../src/db/prepared.js';
import type { EventsTable } from '../../src/db/tables.js';

/**
 * Queries compiled once and run with each call's values (src/db/prepared.ts), on this engine:
 * every call gets its own values (never the first call's), in a transaction too, and a query
 * that does not use each argument exactly once as a value is refused rather than run wrong.
 */
let tdb: TestDatabase;
before(async () => {
  tdb = await openTestDatabase();
  await seedWorkspaces(tdb.database.db);
});
const seedWorkspaces = (db: TestDatabase['database']['db']) =>
  db
    .insertInto('workspaces')
    .values([0, 1, 2].map((i) => ({ id: `ws_p${i}`, name: `P${i}`, created_at: 1000 + i, updated_at: 1000 + i, etag: `e${i}` })))
    .execute();
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
    const inlined = prepared((d, name: string) =>
      d
        .selectFrom('workspaces')
        .select('id')
        .where(sql.lit(String(name)), '=', 'x'),
    );
    await assert.rejects(inlined.all(db, 'x'), /argument 0 must appear exactly once/);
  });
});

const EVENT_COLUMNS = ['id', 'workspace_id', 'type', 'actor_kind', 'actor_id', 'credential_id', 'resource_type', 'resource_id', 'request_id', 'ip', 'user_agent', 'created_at', 'data'] as const;
const insertEvent = preparedInsert('events', EVENT_COLUMNS);
const event = (i: number, over: Partial<EventsTable> = {}): EventsTable => ({
  id: `evt_p${i}`,
  workspace_id: 'ws_p0',
  type: 'secret.created',
  actor_kind: 'api_token',
  actor_id: `tok_${i}`,
  credential_id: `tok_${i}`,
  resource_type: 'secret',
  resource_id: `sec_${i}`,
  request_id: `req-${i}`,
  ip: '127.0.0.1',
  user_agent: `ua ${i}`,
  created_at: 2000 + i,
  data: JSON.stringify({ i }),
  ...over,
});

describe('prepared inserts', () => {
  test('each call inserts its own whole row, nulls included; in a transaction that rolls back, nothing', async () => {
    const db = tdb.database.db;
    await insertEvent(db, event(1));
    await insertEvent(db, event(2, { workspace_id: null, actor_id: null, credential_id: null, request_id: null, ip: null, user_agent: null }));
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await insertEvent(trx, event(3));
        assert.equal((await trx.selectFrom('events').select('id').where('id', '=', 'evt_p3').execute()).length, 1, 'on the transaction’s connection');
        throw new Error('roll back');
      }),
      /roll back/,
    );
    const rows = await db.selectFrom('events').selectAll().where('id', 'like', 'evt_p%').orderBy('id').execute();
    assert.deepEqual(rows, [event(1), event(2, { workspace_id: null, actor_id: null, credential_id: null, request_id: null, ip: null, user_agent: null })]);
  });

  test('every column of the table must be listed (a type error otherwise)', () => {
    const partial = preparedInsert(
      'events',
      // @ts-expect-error `data` is left out: a column added to a table cannot be forgotten silently
      EVENT_COLUMNS.filter((c) => c !== 'data') as unknown as readonly [
        'id',
        'workspace_id',
        'type',
        'actor_kind',
        'actor_id',
        'credential_id',
        'resource_type',
        'resource_id',
        'request_id',
        'ip',
        'user_agent',
        'created_at',
      ],
    );
    assert.equal(typeof partial, 'function');
  });
});

describe('prepared once per connection', () => {
  /**
   * A database of one connection on this test's engine, with or without named statements. On
   * SQLite a file of its own: a second handle of this file would share its connections (one
   * writer per file in a process), whose kept statements the earlier tests already prepared.
   */
  async function single(preparedStatements: boolean) {
    const { openDatabase } = await import('../../src/db/database.js');
    if (ENGINE === 'postgres') return openDatabase({ databaseUrl: process.env.WSP_TEST_PG_URL!, dataDir: tdb.dataDir, pgSchema: tdb.database.pgSchema!, poolSize: 1, preparedStatements });
    const own = await openTestDatabase();
    await seedWorkspaces(own.database.db);
    return { ...own.database, close: () => own.cleanup() };
  }

  test('a prepared query is parsed once, then run by its name (PostgreSQL) or its kept statement (SQLite); other statements are not', async () => {
    const database = await single(true);
    try {
      const db = database.db;
      if (ENGINE === 'postgres') {
        for (const name of ['P1', 'P2', 'P1']) assert.equal((await byName.first(db, name))?.name, name);
        await db.selectFrom('workspaces').select('id').where('name', '=', 'P1').execute();
        const kept = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db);
        assert.equal(kept.rows.length, 1, 'one named statement on the connection, however many calls: the other query is not named');
        assert.match(kept.rows[0]!.statement, /from "workspaces" where "name" = \$1/);
        // The rows every write inserts (its event): named too, once however many rows.
        for (const i of [11, 12]) await insertEvent(db, event(i));
        const inserts = await sql<{ statement: string }>`select statement from pg_prepared_statements where statement like 'insert into "events"%'`.execute(db);
        assert.equal(inserts.rows.length, 1, 'one named insert for two rows');
      } else {
        const Sqlite = (await import('better-sqlite3')).default;
        const prepare = Sqlite.prototype.prepare;
        let parsed = 0;
        Sqlite.prototype.prepare = function (this: InstanceType<typeof Sqlite>, source: string) {
          parsed++;
          return prepare.call(this, source);
        } as typeof prepare;
        try {
          for (const name of ['P1', 'P2', 'P1']) assert.equal((await byName.first(db, name))?.name, name);
        } finally {
          Sqlite.prototype.prepare = prepare;
        }
        assert.equal(parsed, 1, 'three calls, one statement');
      }
    } finally {
      await database.close();
    }
  });

  test('PostgreSQL with WSP_DB_PREPARED_STATEMENTS=false (a pooler in transaction mode): nothing is kept on the connection, and the answers are the same', async () => {
    const database = await single(false);
    try {
      const db = database.db;
      for (const name of ['P1', 'P2']) assert.equal((await byName.first(db, name))?.name, name);
      if (ENGINE === 'postgres') {
        const kept = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(db);
        assert.equal(kept.rows[0]!.n, 0);
      } else {
        assert.deepEqual(await newestBelow.all(db, 1002, 5), [{ id: 'ws_p1' }, { id: 'ws_p0' }]);
      }
    } finally {
      await database.close();
    }
  });
});
