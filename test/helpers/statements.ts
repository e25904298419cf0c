import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/tables.js';

/** The SQL of every statement `db` runs while `fn` runs (outside transactions). */
export async function statementsWhile<T>(db: Kysely<DB>, fn: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
  const executor = db.getExecutor() as unknown as { executeQuery: (q: { sql: string }, ...rest: unknown[]) => Promise<unknown> };
  const original = executor.executeQuery;
  const sql: string[] = [];
  executor.executeQuery = function (q, ...rest) {
    sql.push(q.sql);
    return original.call(this, q, ...rest);
  };
  try {
    return { result: await fn(), sql };
  } finally {
    executor.executeQuery = original;
  }
}
