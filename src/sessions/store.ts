import type { Kysely } from 'kysely';
import type { DB, SessionsTable } from '../db/tables.js';
import { prepared } from '../db/prepared.js';

export const sessionStore = {
  insert: (db: Kysely<DB>, row: SessionsTable) => db.insertInto('sessions').values(row).execute(),

  /** Every request with a session token runs this: compiled once (prepared.ts). */
  byHash: prepared((db, tokenHash: string) => db.selectFrom('sessions').select(['id', 'user_id', 'last_used_at', 'expires_at']).where('token_hash', '=', tokenHash)).first,

  touch: (db: Kysely<DB>, id: string, now: number, expiresAt: number) =>
    db.updateTable('sessions').set({ last_used_at: now, expires_at: expiresAt }).where('id', '=', id).execute(),

  delete: (db: Kysely<DB>, id: string) => db.deleteFrom('sessions').where('id', '=', id).execute(),
};
