import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import {
  Kysely,
  Migrator,
  SqliteDialect,
  sql,
  type Driver,
  type SelectQueryBuilder,
} from 'kysely';
import type { DB } from './tables.js';
import { migrationProvider } from './migrations/index.js';
import { namedStatements } from './prepared.js';
import { makeDirectory, makePrivateFile } from '../shared/directories.js';
import { CurrentSchemaPostgresDialect } from './current-schema-introspector.js';
import { GroupCommitSqliteDriver } from './sqlite-driver.js';

export type Engine = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  engine: Engine;
  /** The PostgreSQL schema in use when not the default one. */
  pgSchema?: string;
  /** PostgreSQL: the statement timeout of this database's pool (src/db/database.ts), lifted by `migrate`. */
  statementLimit?: StatementLimit;
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
}

/** A database that does not accept a connection in this time is unavailable (503) rather than awaited for ever. */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** Why a statement failed when its answer did not come in time: the pool's connection was ended for it. */
export class StatementTimeoutError extends Error {
  // A network code: the database is not answering now (src/db/unavailable.ts), a 503 with Retry-After.
  readonly code = 'ETIMEDOUT';
  constructor(ms: number) {
    super(`the database did not answer a statement within ${ms} ms`);
  }
}

/** The statement timeout in force for one pool; `migrate` lifts it while it runs. */
interface StatementLimit {
  ms: number;
}

/**
 * A pg client whose every statement must be answered within the pool's limit, or its connection
 * is destroyed. pg's own `query_timeout` rejects the query but leaves it running on the
 * connection, which goes back to the pool still busy with it: the next statement on it waits
 * behind the one that timed out, and a transaction's ROLLBACK never runs. Destroying the socket
 * fails every statement queued on the client with the timeout, marks it unusable (the pool drops
 * it on release, pg-pool's `_queryable`) and closes the server's side of it, whose backend then
 * ends (an uncommitted transaction rolls back). PostgreSQL's `statement_timeout` would not help:
 * a stalled network never delivers its error.
 */
function clientWithStatementLimit(limit: StatementLimit, prepare: boolean): typeof pg.Client {
  return class extends pg.Client {
    override query(...args: unknown[]): any {
      // The hot statements by name (src/db/prepared.ts): parsed and planned once per connection.
      const name = prepare && typeof args[0] === 'string' && args.length === 2 ? namedStatements.get(args[0]) : undefined;
      if (name) args = [{ name, text: args[0], values: args[1] }];
      const result = (super.query as (...a: unknown[]) => unknown)(...args);
      const ms = limit.ms;
      if (!ms || !(result instanceof Promise)) return result;
      const timer = setTimeout(() => {
        const stream = (this as unknown as { connection?: { stream?: { destroy(err?: Error): void } } }).connection?.stream;
        stream?.destroy(new StatementTimeoutError(ms));
      }, ms);
      // A timer per statement, cleared as soon as it is answered either way.
      result.then(
        () => clearTimeout(timer),
        () => clearTimeout(timer),
      );
      return result;
    }
  } as typeof pg.Client;
}

// int8 columns hold Unix seconds and counters, all far inside Number's exact range.
pg.types.setTypeParser(20, (v) => Number(v));

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) {
    const statementLimit: StatementLimit = { ms: opts.statementTimeoutMs ?? 0 };
    const pool = new pg.Pool({
      Client: clientWithStatementLimit(statementLimit, opts.preparedStatements ?? true),
      connectionString: opts.databaseUrl,
      max: opts.poolSize ?? 10,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      ...(opts.pgSchema ? { options: `-c search_path=${opts.pgSchema}` } : {}),
    });
    // A client losing its connection (a restart, a failover) emits 'error': the pool listens only
    // while the client is idle, so one in use would crash the process with an uncaught error. The
    // query under way is rejected anyway (503, src/db/unavailable.ts) and the pool drops the client.
    pool.on('error', () => {});
    pool.on('connect', (client) => client.on('error', () => {}));
    // Introspection (the Migrator's check for its own tables) reads only the current schema: see
    // current-schema-introspector.ts for the migration failure the stock one caused.
    const db = new Kysely<DB>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
    return { db, engine: 'postgres', statementLimit, ...(opts.pgSchema ? { pgSchema: opts.pgSchema } : {}), close: () => db.destroy() };
  }
  makeDirectory(opts.dataDir, 0o700);
  const file = sqliteFile(opts.dataDir);
  makePrivateFile(file);
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
  const db = new Kysely<DB>({ dialect: new GroupCommitSqliteDialect(withStatementCache(sqlite), withStatementCache(reader)) });
  return { db, engine: 'sqlite', close: () => db.destroy() };
}

/** Kysely's SQLite dialect with this project's driver (src/db/sqlite-driver.ts). */
class GroupCommitSqliteDialect extends SqliteDialect {
  constructor(
    private readonly writer: SqliteDatabase.Database,
    private readonly reader: SqliteDatabase.Database,
  ) {
    super({ database: writer });
  }

  override createDriver(): Driver {
    return new GroupCommitSqliteDriver(this.writer, this.reader);
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
    expected === '*' ? qb : (qb as unknown as { where(lhs: 'etag', op: '=', rhs: string): QB }).where('etag', '=', expected);

/** Row lock for read-then-write in a transaction; SQLite serializes writers already. */
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
 * one statement and the event that records it (CONTRACT §11) commit together this way.
 */
export function inTransaction<T>(db: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}
