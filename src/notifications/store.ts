import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { NotificationsTable } from './tables.js';
import { jsonObject, preparedJsonPage, type JsonField } from '../db/json-rows.js';
import type { JsonPageRow } from '../shared/cursor.js';
import type { Notification } from './schemas.js';

/** Notification (the API's shape) as the database writes it. */
const NOTIFICATION_JSON: Record<keyof Notification, JsonField> = {
  id: { value: 'id' },
  type: { value: 'type' },
  resource_type: { value: 'resource_type' },
  resource_id: { value: 'resource_id' },
  title: { value: 'title' },
  body: { value: 'body' },
  severity: { value: 'severity' },
  context: { json: 'context' },
  read_at: { value: 'read_at' },
  created_at: { value: 'created_at' },
};

function listed(db: Kysely<DB>, userId: string, unreadOnly: boolean) {
  const q = db
    .selectFrom('notifications')
    .select(['id', jsonObject(db, NOTIFICATION_JSON).as('json')])
    .where('user_id', '=', userId);
  return unreadOnly ? q.where('read_at', 'is', null) : q;
}

/** The name of a user's notification list in list_versions (migration 0018's triggers write it). */
export const NOTIFICATION_LIST_PREFIX = 'notifications:';
export const notificationListName = (userId: string) => NOTIFICATION_LIST_PREFIX + userId;

// A statement per shape, compiled once (src/db/json-rows.ts): all or unread, first page or after a cursor.
const shapes = (unreadOnly: boolean) => ({
  first: preparedJsonPage((db, userId: string, take: number) => listed(db, userId, unreadOnly).orderBy('id', 'desc').limit(take)),
  after: preparedJsonPage((db, userId: string, beforeId: string, take: number) => listed(db, userId, unreadOnly).where('id', '<', beforeId).orderBy('id', 'desc').limit(take)),
});
const PAGES = { all: shapes(false), unread: shapes(true) };

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

  /** A user's notifications, newest first (ids are time-ordered), keyset after `beforeId`: `take` at most, as one JSON page row. */
  page: (db: Kysely<DB>, userId: string, unreadOnly: boolean, take: number, beforeId: string | null): Promise<JsonPageRow> => {
    const shape = PAGES[unreadOnly ? 'unread' : 'all'];
    const list = notificationListName(userId);
    return beforeId ? shape.after(db, list, take, userId, beforeId) : shape.first(db, list, take, userId);
  },

  /**
   * The live streams' look (src/notifications/stream.ts): for each user, the notifications after
   * that user's floor, the first `perUser` of each by id (one user's backlog does not push the
   * others' new ones out of the answer), in id order. One statement for all the users given.
   */
  afterFloors: (db: Kysely<DB>, floors: readonly { userId: string; after: string }[], perUser: number): Promise<NotificationsTable[]> =>
    db
      .selectFrom((eb) =>
        eb
          .selectFrom('notifications')
          .selectAll()
          .select(sql<number>`row_number() over (partition by user_id order by id)`.as('nth'))
          .where((w) => w.or(floors.map((f) => w.and([w('user_id', '=', f.userId), w('id', '>', f.after)]))))
          .as('n'),
      )
      .selectAll()
      .where('nth', '<=', perUser)
      .orderBy('id', 'asc')
      .execute(),

  /** Sets read_at once, and only on the user's own notification. */
  /** Whether it changed (false: unknown, someone else's, or already read). */
  markRead: async (db: Kysely<DB>, userId: string, id: string, now: number): Promise<boolean> => {
    const res = await db.updateTable('notifications').set({ read_at: now }).where('id', '=', id).where('user_id', '=', userId).where('read_at', 'is', null).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /** The user's notifications unread at some time in (from, until], as spans: from arrival until read. */
  async unreadSpans(db: Kysely<DB>, userId: string, from: number, until: number): Promise<{ start: number; end: number | null }[]> {
    const rows = await db
      .selectFrom('notifications')
      .select(['created_at', 'read_at'])
      .where('user_id', '=', userId)
      .where('created_at', '<=', until)
      .where((eb) => eb.or([eb('read_at', 'is', null), eb('read_at', '>', from)]))
      .execute();
    return rows.map((n) => ({ start: n.created_at, end: n.read_at }));
  },
};
