// PostgreSQL's side of openDatabase (src/db/database.ts), loaded only when DATABASE_URL is set.
import pg from 'pg';
import { Kysely } from 'kysely';
import type { DB } from './tables.js';
import type { Database, DatabaseOptions, StatementLimit } from './database.js';
import { namedStatements } from './prepared.js';
import { CurrentSchemaPostgresDialect } from './current-schema-introspector.js';

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
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's Client.query is overloaded; this override keeps every overload's return type
    override query(...args: unknown[]): any {
      // The hot statements by name (src/db/prepared.ts): parsed and planned once per connection.
      const name = prepare && typeof args[0] === 'string' && args.length === 2 ? namedStatements.get(args[0]) : undefined;
      if (name) args = [{ name, text: args[0], values: args[1] }];
      const result = (super.query as (...a: unknown[]) => unknown)(...args);
      const ms = limit.ms;
      if (!ms || !(result instanceof Promise)) return result;
      const timer = setTimeout(() => {
        // eslint-disable-next-line no-restricted-syntax -- pg.Client's connection is not in its types; its stream is destroyed to end a statement that ran out of time
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
  };
}

// int8 columns hold Unix seconds and counters, all far inside Number's exact range.
pg.types.setTypeParser(20, (v) => Number(v));

export function openPostgres(opts: DatabaseOptions & { databaseUrl: string }): Database {
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
