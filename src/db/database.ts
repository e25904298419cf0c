import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql, type Driver, type SelectQueryBuilder } from 'kysely';
import type { DB } from './tables.js';
import { migrationProvider } from './migrations/index.js';
import { makeDirectory, makePrivateFile } from '../shared/directories.js';
import { GroupCommitSqliteDriver } from './sqlite-driver.js';
import { startWalCheckpointer, type WalCheckpointer } from './wal-checkpointer.js';

export type Engine = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  engine: Engine;
  /** The PostgreSQL schema in use when not the default one. */
  pgSchema?: string;
  /** PostgreSQL: the statement timeout of this database's pool (src/db/database.ts), lifted by `migrate`. */
  statementLimit?: StatementLimit;
  /** SQLite: who checkpoints the WAL, the writer on its commits or a thread of its own (src/db/wal-checkpointer.ts). */
  checkpoints?: 'writer' | 'thread';
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres:// URL; without one the embedded SQLite file in dataDir is used. */
  databaseUrl?: string | undefined;
  dataDir: string;
  /** PostgreSQL schema to use (tests give each app its own). */
  pgSchema?: string;
  poolSize?: number;
  /**
   * PostgreSQL: give up waiting for a connection after this long, whether the pool is full or a
   * new connection is slow to open (the pool's default waits forever).
   */
  connectTimeoutMs?: number;
  /** PostgreSQL: a statement not answered in this long ends its connection (unset or 0: no limit). */
  statementTimeoutMs?: number;
  /** PostgreSQL: prepare the statements of `prepared()` once per connection (default true). */
  preparedStatements?: boolean;
  /** SQLite: checkpoint the WAL on a thread of its own, off the event loop (a server's; src/db/wal-checkpointer.ts). */
  backgroundCheckpoints?: boolean;
}

/** The statement timeout in force for one pool; `migrate` lifts it while it runs. */
export interface StatementLimit {
  ms: number;
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  // pg only when PostgreSQL is used: loading it costs the embedded default about 30 ms of its
  // start (it reads `navigator`, which makes Node 20 load its fetch implementation).
  if (opts.databaseUrl) return (await import('./postgres.js')).openPostgres({ ...opts, databaseUrl: opts.databaseUrl });
  makeDirectory(opts.dataDir, 0o700);
  const file = sqliteFile(opts.dataDir);
  makePrivateFile(file);
  const key = fs.realpathSync(file);
  let shared = openFiles.get(key);
  // A file whose last handle is closing gets a new writer once the old one has committed and
  // closed, never beside it.
  while (shared?.closing) {
    await shared.closing;
    shared = openFiles.get(key);
  }
  if (!shared) {
    shared = { ...openSqliteDriver(file), checkpointer: null, handles: 0, closing: null };
    openFiles.set(key, shared);
  }
  if (opts.backgroundCheckpoints) shared.checkpointer ??= startWalCheckpointer(file, shared.writer);
  shared.handles++;
  const handle = shared;
  const db = new Kysely<DB>({
    dialect: new GroupCommitSqliteDialect(handle.driver, async () => {
      if (--handle.handles > 0) return;
      // The thread's connection closes first: the writer's close, the last, checkpoints what is left.
      handle.closing = (async () => {
        await handle.checkpointer?.stop();
        await handle.driver.destroy();
      })().finally(() => openFiles.delete(key));
      await handle.closing;
    }),
  });
  return { db, engine: 'sqlite', checkpoints: handle.checkpointer ? 'thread' : 'writer', close: () => db.destroy() };
}

/**
 * The SQLite files this process has open, by real path, and how many handles use each. Every
 * `openDatabase` of one file in a process shares its writer, and so its groups: with a writer
 * each, one holding the write lock to the end of its turn made the other's busy wait block that
 * very turn (5 s, then SQLITE_BUSY), as an admin command run in-process next to a serving app did.
 */
const openFiles = new Map<string, { driver: GroupCommitSqliteDriver; writer: SqliteDatabase.Database; checkpointer: WalCheckpointer | null; handles: number; closing: Promise<void> | null }>();

function openSqliteDriver(file: string): { driver: GroupCommitSqliteDriver; writer: SqliteDatabase.Database } {
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  // Destroyed secret payloads must not linger in free pages.
  sqlite.pragma('secure_delete = ON');
  // The connection that reads outside transactions (src/db/sqlite-driver.ts): committed data only.
  const reader = new SqliteDatabase(file);
  reader.pragma('busy_timeout = 5000');
  reader.pragma('query_only = ON');
  return { driver: new GroupCommitSqliteDriver(withStatementCache(sqlite), withStatementCache(reader)), writer: sqlite };
}

/**
 * Kysely's SQLite dialect with this project's driver (src/db/sqlite-driver.ts), shared by every
 * handle of the file in this process: destroying a handle releases it, the last one closes it.
 */
class GroupCommitSqliteDialect extends SqliteDialect {
  constructor(
    private readonly driver: GroupCommitSqliteDriver,
    private readonly release: () => Promise<void>,
  ) {
    // The database option is read only by Kysely's own SQLite driver, which this dialect replaces.
    super({ database: {} as never });
  }

  override createDriver(): Driver {
    const { driver, release } = this;
    return {
      init: async () => {},
      acquireConnection: () => driver.acquireConnection(),
      beginTransaction: (connection, settings) => driver.beginTransaction(connection, settings),
      commitTransaction: (connection) => driver.commitTransaction(connection),
      rollbackTransaction: (connection) => driver.rollbackTransaction(connection),
      releaseConnection: (connection) => driver.releaseConnection(connection),
      destroy: release,
    };
  }
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew; compiling SQL is most of a short query's cost on SQLite,
 * and an app runs the same few hundred statements. Statements are reused by their SQL text
 * (better-sqlite3 re-prepares one by itself if the schema changes under it).
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDatabase.Database {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return new Proxy(sqlite, {
    get(target, prop, receiver) {
      if (prop !== 'prepare') {
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (source: string) => {
        let stmt = cache.get(source);
        if (!stmt) {
          stmt = target.prepare(source);
          if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
          cache.set(source, stmt);
        }
        return stmt;
      };
    },
  });
}

/** Migrates to the latest schema, or (tests of a migration's data handling) to `target`. */
export async function migrate(database: Database, target?: string): Promise<void> {
  // The migration tables are named with their schema: the one given, else the connection's
  // current schema (DATABASE_URL may set search_path), which is also the only schema the
  // introspector reads (current-schema-introspector.ts), so another schema's tables are never
  // taken for ours.
  let schema = database.pgSchema;
  if (database.engine === 'postgres' && !schema) {
    const { rows } = await sql<{ s: string | null }>`select current_schema() as s`.execute(database.db);
    schema = rows[0]?.s ?? undefined;
  }
  if (!target && (await upToDate(database, schema))) return;
  // A migration may rewrite a large table in one statement: the request bound does not apply.
  const limit = database.statementLimit;
  const saved = limit?.ms ?? 0;
  if (limit) limit.ms = 0;
  try {
    await migrateUnlimited(database, schema, target);
  } finally {
    if (limit) limit.ms = saved;
  }
}

/**
 * Whether every migration this build knows has run, and no other: one statement, where Kysely's
 * Migrator introspects the schema and takes its lock first (about 40 ms of a PostgreSQL
 * server's start). Anything else (no table yet, one pending, a newer database's migrations)
 * goes to the Migrator, which migrates or says what is wrong.
 */
async function upToDate(database: Database, schema: string | undefined): Promise<boolean> {
  const known = Object.keys(await migrationProvider.getMigrations());
  const table = schema ? `${schema}.kysely_migration` : 'kysely_migration';
  try {
    const { rows } = await sql<{ name: string }>`select name from ${sql.table(table)}`.execute(database.db);
    const ran = new Set(rows.map((r) => r.name));
    return ran.size === known.length && known.every((name) => ran.has(name));
  } catch {
    return false;
  }
}

async function migrateUnlimited(database: Database, schema: string | undefined, target: string | undefined): Promise<void> {
  const migrator = new Migrator({
    db: database.db,
    provider: migrationProvider,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = target ? await migrator.migrateTo(target) : await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? 'unknown');
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${reason}`);
  }
}

/**
 * The etag condition of a conditional write (`qb.$call(ifEtag(expected))`): the row's `etag`
 * must still be `expected`, the If-Match value as parsed (`parseIfMatch`); `*` matches any.
 */
export const ifEtag =
  (expected: string) =>
  <QB extends object>(qb: QB): QB =>
    // Any UPDATE, DELETE or SELECT builder of a table with an `etag` column (Kysely's overloaded
    // `where` does not unify with a generic constraint, hence the cast).
    // eslint-disable-next-line no-restricted-syntax -- every builder passed here selects from a table with an etag column, which QB's generic type cannot state
    expected === '*' ? qb : (qb as unknown as { where(lhs: 'etag', op: '=', rhs: string): QB }).where('etag', '=', expected);

/** Row lock for read-then-write in a transaction; SQLite serializes writers already. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a query over any tables: Kysely's builder is invariant in its table set, and this only adds a clause
export function forUpdate<QB extends SelectQueryBuilder<any, any, any>>(engine: Engine, qb: QB): QB {
  return engine === 'postgres' ? (qb.forUpdate() as QB) : qb;
}

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string } | null;
  return !!e && (e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY');
}

/**
 * An error the database itself raised (a constraint, a missing table, a lost connection's SQL
 * state): better-sqlite3's SQLITE_* codes, PostgreSQL's five-character SQLSTATE with a severity.
 */
export function isDatabaseError(err: unknown): boolean {
  const e = err as { code?: unknown; severity?: unknown } | null;
  if (!e || typeof e.code !== 'string') return false;
  return e.code.startsWith('SQLITE_') || (typeof e.severity === 'string' && /^[0-9A-Z]{5}$/.test(e.code));
}

/** The embedded database's file in the data directory. */
export const sqliteFile = (dataDir: string) => path.join(dataDir, 'wsp.sqlite');

/**
 * Runs `fn` in a transaction: `db`'s own when it already is one, a new one otherwise. A write of
 * one statement and the event that records it (docs/spec-gaps.md, "Events and the audit log") commit together this way.
 */
export function inTransaction<T>(db: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}
