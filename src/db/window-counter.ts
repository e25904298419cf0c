import { sql, type Kysely } from 'kysely';
import type { DB, WindowCounterTable } from './tables.js';

/**
 * Tables of fixed-window failure counters: `{key, window_start, failures}`. Found by their rows'
 * shape rather than listed: the areas' own (sign-in limits, device code guesses) join `DB` from
 * their table files, which the machinery does not name.
 */
export type WindowTable = { [T in keyof DB]: DB[T] extends WindowCounterTable ? T : never }[keyof DB];

/**
 * Counts one attempt against `key` in a fixed window of `windowSeconds` and answers the count so
 * far and the window's start, in one statement: parallel attempts cannot all slip under a limit.
 * Counted in the database, so every server instance shares the count.
 */
export async function countAttempt(db: Kysely<DB>, table: WindowTable, key: string, now: number, windowSeconds: number): Promise<{ failures: number; window_start: number }> {
  const t = table as 'request_limits';
  const windowOver = sql<boolean>`${sql.ref(`${t}.window_start`)} <= ${now - windowSeconds}`;
  const row = await db
    .insertInto(t)
    .values({ key, window_start: now, failures: 1 })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        failures: sql<number>`case when ${windowOver} then 1 else ${sql.ref(`${t}.failures`)} + 1 end`,
        window_start: sql<number>`case when ${windowOver} then ${now} else ${sql.ref(`${t}.window_start`)} end`,
      }),
    )
    .returning(['failures', 'window_start'])
    .executeTakeFirstOrThrow();
  return { failures: Number(row.failures), window_start: Number(row.window_start) };
}

/** An attempt that turned out not to be a failure does not count. */
export async function giveBackAttempt(db: Kysely<DB>, table: WindowTable, key: string): Promise<void> {
  const t = table as 'request_limits';
  await db
    .updateTable(t)
    .set({ failures: sql<number>`failures - 1` })
    .where('key', '=', key)
    .where('failures', '>', 0)
    .execute();
}

/** Windows that ended before `before`: nothing counts in them any more. */
export async function purgeWindows(db: Kysely<DB>, table: WindowTable, before: number): Promise<number> {
  const t = table as 'request_limits';
  return Number((await db.deleteFrom(t).where('window_start', '<', before).executeTakeFirst()).numDeletedRows);
}
