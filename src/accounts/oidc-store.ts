import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { OidcLoginsTable } from './tables.js';

export const oidcLoginStore = {
  insert: (db: Kysely<DB>, row: OidcLoginsTable) => db.insertInto('oidc_logins').values(row).execute(),

  /** The login its state names, deleted in the same statement: a callback is honoured once. */
  take: (db: Kysely<DB>, stateHash: string) => db.deleteFrom('oidc_logins').where('state_hash', '=', stateHash).returningAll().executeTakeFirst(),

  purgeExpired: async (db: Kysely<DB>, before: number): Promise<number> => Number((await db.deleteFrom('oidc_logins').where('expires_at', '<', before).executeTakeFirst()).numDeletedRows),
};
