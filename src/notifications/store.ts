import type { Kysely } from 'kysely';
import type { DB, NotificationsTable } from '../db/tables.js';

export const notificationStore = {
  /** Rows whose dedupe key exists already are skipped; returns how many were inserted. */
  insertMany: async (db: Kysely<DB>, rows: NotificationsTable[]): Promise<number> => {
    if (rows.length === 0) return 0;
    const res = await db
      .insertInto('notifications')
      .values(rows)
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0);
  },

  /** A user's notifications, newest first (ids are time-ordered), keyset after `beforeId`. */
  page: (db: Kysely<DB>, userId: string, unreadOnly: boolean, limit: number, beforeId: string | null) => {
    let q = db.selectFrom('notifications').selectAll().where('user_id', '=', userId);
    if (unreadOnly) q = q.where('read_at', 'is', null);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },

  /** Sets read_at once, and only on the user's own notification. */
  /** Whether it changed (false: unknown, someone else's, or already read). */
  markRead: async (db: Kysely<DB>, userId: string, id: string, now: number): Promise<boolean> => {
    const res = await db.updateTable('notifications').set({ read_at: now }).where('id', '=', id).where('user_id', '=', userId).where('read_at', 'is', null).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },
};
