import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { SessionsTable } from './tables.js';
import { credentialByHash } from '../db/credential-rows.js';

export type SessionRow = SessionsTable;

const LISTED = ['id', 'created_at', 'last_used_at', 'expires_at', 'not_after', 'issued_by', 'user_agent', 'ip'] as const;

export const sessionStore = {
  insert: (db: Kysely<DB>, row: SessionsTable) => db.insertInto('sessions').values(row).execute(),

  /** Every request with a session token runs one of these, alone or with its user's list's version. */
  ...credentialByHash((db) => db.selectFrom('sessions').select(['id', 'user_id', 'created_at', 'last_used_at', 'expires_at', 'not_after', 'csrf_token']), 'sessions.user_id'),

  /** What decides whether these sessions are still live, for the sessions that still exist (one statement). */
  ends: (db: Kysely<DB>, ids: readonly string[]) => db.selectFrom('sessions').select(['id', 'created_at', 'expires_at', 'not_after']).where('id', 'in', ids).execute(),

  touch: (db: Kysely<DB>, id: string, now: number, expiresAt: number) => db.updateTable('sessions').set({ last_used_at: now, expires_at: expiresAt }).where('id', '=', id).execute(),

  /** A user's live sessions, newest first (ids are time-ordered), keyset after `beforeId`. */
  page: (db: Kysely<DB>, userId: string, now: number, maxSeconds: number, limit: number, beforeId: string | null) => {
    let q = db
      .selectFrom('sessions')
      .select(LISTED)
      .where('user_id', '=', userId)
      .where('expires_at', '>', now)
      .where('created_at', '>', now - maxSeconds)
      .where((eb) => eb.or([eb('not_after', 'is', null), eb('not_after', '>', now)]));
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },

  /** Ends the user's least recently used sessions beyond the `keep` most recent. */
  endBeyond: async (db: Kysely<DB>, userId: string, keep: number) => {
    const kept = db.selectFrom('sessions').select('id').where('user_id', '=', userId).orderBy('last_used_at', 'desc').orderBy('id', 'desc').limit(keep);
    await db.deleteFrom('sessions').where('user_id', '=', userId).where('id', 'not in', kept).execute();
  },

  delete: (db: Kysely<DB>, id: string) => db.deleteFrom('sessions').where('id', '=', id).execute(),

  deleteById: async (db: Kysely<DB>, id: string): Promise<boolean> => Number((await db.deleteFrom('sessions').where('id', '=', id).executeTakeFirst()).numDeletedRows) > 0,

  deleteOwn: async (db: Kysely<DB>, userId: string, id: string): Promise<boolean> =>
    Number((await db.deleteFrom('sessions').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst()).numDeletedRows) > 0,

  deleteOfUser: async (db: Kysely<DB>, userId: string): Promise<number> => Number((await db.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst()).numDeletedRows),
};
