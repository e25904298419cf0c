import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql } from 'kysely';
import { ENGINE } from '../helpers/harness.js';
import { migrate, openDatabase, type Database } from '../../src/db/database.js';

/**
 * `migrate()` (every `wsp serve`, `worker` and `admin` start) must not depend on what other
 * applications do to their own schemas of the same PostgreSQL database. It once did: to find its
 * own tables, Kysely's stock introspector read every column of every schema and resolved each
 * table by name (`pg_get_serial_sequence`), so a table renamed elsewhere between the catalog
 * read and the lookup failed the migration with "relation ... does not exist"
 * (test/admin/service.test.ts renamed `api_tokens` in its schema while other files migrated).
 */

const PREFIX = `t_${process.env.WSP_TEST_RUN_ID ?? ''}`;
const newSchema = () => `${PREFIX}${randomBytes(6).toString('hex')}`;

/** Tables and columns of `schema` from information_schema: what the introspector must list. */
async function catalogTables(database: Database, schema: string): Promise<Map<string, string[]>> {
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    select c.table_name, c.column_name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = ${schema} order by c.table_name, c.ordinal_position`.execute(database.db);
  const tables = new Map<string, string[]>();
  for (const r of rows) tables.set(r.table_name, [...(tables.get(r.table_name) ?? []), r.column_name]);
  return tables;
}

if (ENGINE === 'postgres') {
  const url = process.env.WSP_TEST_PG_URL!;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-migrate-'));
  process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));

  async function run(text: string): Promise<void> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  }

  /** A schema of its own, migrated: with `pgSchema`, or (as DATABASE_URL may) with search_path in the URL. */
  async function migrateFresh(how: 'pgSchema' | 'url'): Promise<{ schema: string; database: Database }> {
    const schema = newSchema();
    await run(`create schema ${schema}`);
    let database: Database;
    if (how === 'pgSchema') database = await openDatabase({ databaseUrl: url, dataDir, pgSchema: schema, poolSize: 2 });
    else {
      const withPath = new URL(url);
      withPath.searchParams.set('options', `-c search_path=${schema}`);
      database = await openDatabase({ databaseUrl: withPath.toString(), dataDir, poolSize: 2 });
    }
    try {
      await migrate(database);
    } catch (e) {
      await database.close();
      throw e;
    }
    return { schema, database };
  }

  test('migrations succeed while another schema of the database keeps renaming a table', async (t) => {
    // Another application's schema: a few tables with serial columns, one renamed back and forth
    // in a tight loop on a connection of its own until the migrations are done.
    const other = newSchema();
    await run(`create schema ${other}`);
    await run(Array.from({ length: 8 }, (_, i) => `create table ${other}.tab${i} (id serial primary key, a text, b integer, c text);`).join('\n'));
    const renamer = new pg.Client({ connectionString: url });
    await renamer.connect();
    let stop = false;
    let renames = 0;
    const spinning = (async () => {
      while (!stop) {
        await renamer.query(`alter table ${other}.tab0 rename to tab0_away`);
        await renamer.query(`alter table ${other}.tab0_away rename to tab0`);
        renames += 2;
      }
    })();

    const MIGRATIONS = 12;
    const PARALLEL = 3;
    const failures: string[] = [];
    let done = 0;
    try {
      await Promise.all(
        Array.from({ length: PARALLEL }, async (_, lane) => {
          for (let i = lane; i < MIGRATIONS; i += PARALLEL) {
            try {
              const { database } = await migrateFresh(i % 2 ? 'url' : 'pgSchema');
              await database.close();
              done++;
            } catch (e) {
              failures.push((e as Error).message);
            }
          }
        }),
      );
    } finally {
      stop = true;
      await spinning;
      await renamer.end();
    }
    t.diagnostic(`${done} migrations of fresh schemas beside ${renames} renames in another schema`);
    assert.ok(renames > 0, 'the other schema was renaming throughout');
    assert.deepEqual(failures, [], 'every migration succeeded');
    assert.equal(done, MIGRATIONS);
  });

  test('the introspector lists the tables of the current schema, and only them', async () => {
    const { schema, database } = await migrateFresh('pgSchema');
    try {
      // Another schema with a table of the same name as one of ours, and one of a name we lack.
      const other = newSchema();
      await run(`create schema ${other}; create table ${other}.workspaces (x int); create table ${other}.not_ours (x int)`);
      const expected = await catalogTables(database, schema);
      assert.ok(expected.has('workspaces') && expected.has('kysely_migration'));

      const all = await database.db.introspection.getTables({ withInternalKyselyTables: true });
      assert.deepEqual(new Set(all.map((t) => t.schema)), new Set([schema]));
      assert.deepEqual(new Map(all.map((t) => [t.name, t.columns.map((c) => c.name)])), expected);

      const user = await database.db.introspection.getTables();
      assert.deepEqual(
        user.map((t) => t.name).sort(),
        [...expected.keys()].filter((n) => n !== 'kysely_migration' && n !== 'kysely_migration_lock').sort(),
        "without withInternalKyselyTables, Kysely's own tables are left out",
      );
      // Column facts as the stock introspector gave them: a serial column is auto-incrementing.
      await sql`create table serial_probe (id serial primary key, n integer not null default 1, note text)`.execute(database.db);
      const probe = (await database.db.introspection.getTables()).find((t) => t.name === 'serial_probe')!;
      assert.deepEqual(
        probe.columns.map((c) => [c.name, c.dataType, c.isAutoIncrementing, c.isNullable, c.hasDefaultValue]),
        [
          ['id', 'int4', true, false, true],
          ['n', 'int4', false, false, true],
          ['note', 'text', false, true, false],
        ],
      );
      assert.deepEqual(
        (await database.db.introspection.getSchemas())
          .map((s) => s.name)
          .filter((n) => n === schema || n === other)
          .sort(),
        [schema, other].sort(),
        'every schema is listed, as the migrator expects to find its own',
      );

      // Migrating again finds its tables and changes nothing.
      const before = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db);
      await migrate(database);
      const after = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db);
      assert.deepEqual(after.rows, before.rows);
      assert.deepEqual(await catalogTables(database, schema), new Map([...expected, ['serial_probe', ['id', 'n', 'note']]]));
    } finally {
      await database.close();
    }
  });
} else {
  test('SQLite: migrating a fresh file creates every table; migrating it again changes nothing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-migrate-'));
    const database = await openDatabase({ dataDir: dir });
    try {
      await migrate(database);
      const tables = () => sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name`.execute(database.db);
      const migrations = () => sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db);
      const firstTables = (await tables()).rows.map((r) => r.name);
      const firstMigrations = (await migrations()).rows.map((r) => r.name);
      assert.ok(firstTables.includes('workspaces') && firstTables.includes('kysely_migration_lock'), firstTables.join(','));
      assert.ok(firstMigrations.length >= 1);
      await migrate(database);
      assert.deepEqual(
        (await tables()).rows.map((r) => r.name),
        firstTables,
      );
      assert.deepEqual(
        (await migrations()).rows.map((r) => r.name),
        firstMigrations,
      );
    } finally {
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
