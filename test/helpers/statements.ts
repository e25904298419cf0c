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

/**
 * The database, counting the statements sent through it, or failing each one when `fail`: the
 * batchers' tests (one statement a loop turn). Kysely's methods are bound to the real one, which
 * keeps private fields.
 */
export function countingStatements(db: Kysely<DB>, fail = false): { db: Kysely<DB>; statements: () => number } {
  let n = 0;
  const proxy = new Proxy(db, {
    get(target, prop) {
      if (prop === 'executeQuery') {
        return (query: Parameters<Kysely<DB>['executeQuery']>[0]) => {
          n++;
          return fail ? Promise.reject(new Error('the statement failed')) : target.executeQuery(query);
        };
      }
      const v: unknown = Reflect.get(target, prop);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { db: proxy, statements: () => n };
}
