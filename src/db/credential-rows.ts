import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB } from './tables.js';
import { prepared } from './prepared.js';

/**
 * A credential's row by its token's hash (sessions, API tokens), compiled once (prepared.ts):
 * alone, or with the version of the list named `listPrefix` + the row's `owner` column in the same
 * statement (`list_version`, null before the list's first write), so that a read of the caller's
 * own list makes one round trip with its credential (src/http/list-cache.ts).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a query over any tables: Kysely's builder is invariant in its table set, and this only adds a clause
export function credentialByHash<Row>(credential: (db: Kysely<DB>) => SelectQueryBuilder<DB, any, Row>, owner: string) {
  const ownList = (prefix: unknown) => sql<number | string | null>`(select version from list_versions where list = ${prefix} || ${sql.ref(owner)})`;
  return {
    byHash: prepared((db, tokenHash: string) => credential(db).where('token_hash', '=', tokenHash)).first,
    byHashWithList: prepared((db, tokenHash: string, listPrefix: string) => credential(db).select(ownList(listPrefix).as('list_version')).where('token_hash', '=', tokenHash)).first,
  };
}
