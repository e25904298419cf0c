import { sql, type Kysely } from 'kysely';
import type { DB } from './tables.js';

export const settingsStore = {
  /** A server-wide value made once; every instance on the same database reads the same one. */
  async getOrCreate(db: Kysely<DB>, key: string, make: () => string): Promise<string> {
    await db
      .insertInto('settings')
      .values({ key, value: make() })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
    return row.value;
  },

  /** Sets `key` unless it is set already: false when it was (first-run flags, claimed once). */
  claim: async (db: Kysely<DB>, key: string, value: string): Promise<boolean> => {
    const res = await db
      .insertInto('settings')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
  },

  get: async (db: Kysely<DB>, key: string): Promise<string | null> => (await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst())?.value ?? null,

  /**
   * The values of the key and of every key `<key>.<anything>`: compared by their first bytes,
   * exactly, as neither LIKE (its `_` is a wildcard, and SQLite's ignores case) nor a range
   * (PostgreSQL orders text by the database's collation) would.
   */
  family: async (db: Kysely<DB>, key: string): Promise<string[]> => {
    const prefix = `${key}.`;
    const rows = await db
      .selectFrom('settings')
      .select('value')
      .where((eb) => eb.or([eb('key', '=', key), eb(sql<string>`substr(${sql.ref('key')}, 1, ${sql.lit(prefix.length)})`, '=', prefix)]))
      .execute();
    return rows.map((row) => row.value);
  },

  set: (db: Kysely<DB>, key: string, value: string) =>
    db
      .insertInto('settings')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute(),
};
