import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type KyselyPlugin } from 'kysely';
import { openTestDatabase } from '../helpers/harness.js';
import { migrate } from '../../src/db/database.js';
import { migrationProvider } from '../../src/db/migrations/index.js';

/**
 * Every start (`wsp serve`, `worker`, `admin`) calls `migrate()`. On a database already at this
 * build's migrations it reads their names once and returns: Kysely's Migrator, which introspects
 * the schema and takes its lock first, was about 40 ms of a PostgreSQL server's start. Anything
 * else still goes to the Migrator.
 */

const migrationTable = (schema: string | undefined) => (schema ? `${schema}.kysely_migration` : 'kysely_migration');

/** Counts the statements run through the database handle it is given to. */
function counting(database: Awaited<ReturnType<typeof openTestDatabase>>['database']) {
  const seen: string[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: (args) => (seen.push(args.node.kind), args.node),
    transformResult: async (args) => args.result,
  };
  return { database: { ...database, db: database.db.withPlugin(plugin) }, seen };
}

test('a database at every migration of this build: migrate() reads the names of those that ran, one statement, and returns', async () => {
  const t = await openTestDatabase();
  try {
    const { database, seen } = counting(t.database);
    await migrate(database);
    // PostgreSQL asks for the current schema first when the URL chose none (not so here: each test has its own).
    assert.deepEqual(seen, ['RawNode']);
  } finally {
    await t.cleanup();
  }
});

test('a database with a migration pending is migrated: the check never skips one', async () => {
  const names = Object.keys(await migrationProvider.getMigrations()).sort();
  const t = await openTestDatabase(names.at(-2));
  try {
    await migrate(t.database);
    const { rows } = await sql<{ name: string }>`select name from ${sql.table(migrationTable(t.database.pgSchema))} order by name desc`.execute(t.database.db);
    assert.equal(rows[0]?.name, names.at(-1));
  } finally {
    await t.cleanup();
  }
});

test('a database with a migration this build does not know is refused, as before', async () => {
  const t = await openTestDatabase();
  try {
    await sql`insert into ${sql.table(migrationTable(t.database.pgSchema))} (name, timestamp) values (${'9999_from_a_newer_release'}, ${new Date().toISOString()})`.execute(t.database.db);
    await assert.rejects(migrate(t.database), /corrupted migrations: previously executed migration 9999_from_a_newer_release is missing|9999_from_a_newer_release/);
  } finally {
    await t.cleanup();
  }
});
