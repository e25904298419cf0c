import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { NotificationsTable } from './tables.js';
import type { ServiceDeps } from '../service-deps.js';
import { userIdOf, type RequestContext } from '../auth/principal.js';
import { canonicalId, newId } from '../shared/ids.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { ApiError } from '../shared/errors.js';
import { pageByIdAsJson } from '../shared/cursor.js';
import { NOTIFICATION_LIST_PREFIX, notificationListName, notificationStore } from './store.js';
import type { ListNotificationsQuery, Notification } from './schemas.js';
import { writeTransaction } from '../db/write-transaction.js';

/** The list_versions name of this list (src/http/list-cache.ts). */
export { NOTIFICATION_LIST_PREFIX, notificationListName };

export type Severity = 'info' | 'warning' | 'critical';

export interface NewNotification {
  userIds: readonly string[];
  type: string;
  resource_type: string;
  resource_id: string;
  title: string;
  body: string;
  severity: Severity;
  context: Record<string, unknown>;
  /**
   * Makes the notice once-only per user: a second call with the same key (another server
   * instance, a retried job) inserts nothing. Enforced by a unique column, not in memory.
   */
  dedupeKey?: string;
}

/**
 * Sends one in-app notification to each user; for other areas (pass their transaction as
 * `db` so the notice and the state change that caused it commit together).
 * Returns how many were new.
 */
export async function notify(db: Kysely<DB>, clock: Clock, n: NewNotification): Promise<number> {
  const now = nowSeconds(clock);
  const rows: NotificationsTable[] = [...new Set(n.userIds)].map((userId) => ({
    id: newId('ntf'),
    user_id: userId,
    type: n.type,
    resource_type: n.resource_type,
    resource_id: n.resource_id,
    title: n.title,
    body: n.body,
    severity: n.severity,
    context: JSON.stringify(n.context),
    read_at: null,
    created_at: now,
    dedupe_key: n.dedupeKey === undefined ? null : `${n.dedupeKey}:${userId}`,
  }));
  return notificationStore.insertMany(db, rows);
}

/** Notifications belong to a user, not to a workspace: every query is by the caller's user id. */
export function callerUserId(ctx: RequestContext): string {
  const userId = userIdOf(ctx.principal);
  if (!userId) throw new ApiError('USER_REQUIRED');
  return userId;
}

export function createNotificationService({ db, clock, cursors, events }: Pick<ServiceDeps, 'db' | 'clock' | 'cursors' | 'events'>) {
  return {
    async list(ctx: RequestContext, query: ListNotificationsQuery) {
      const userId = callerUserId(ctx);
      const unreadOnly = query.unread === 'true';
      const limit = query.limit;
      return pageByIdAsJson<Notification>(cursors, `notifications:${userId}:${unreadOnly ? 'unread' : 'all'}`, { limit, cursor: query.cursor }, notificationListName(userId), (after, take) =>
        notificationStore.page(db, userId, unreadOnly, take, after),
      );
    },

    /** Idempotent and silent: someone else's, unknown or already-read ids change nothing and tell nothing. */
    async markRead(ctx: RequestContext, rawId: string): Promise<void> {
      const id = canonicalId('ntf', rawId);
      // Recorded only when it changed something: a repeat or an unknown id is a no-op, and silent.
      await writeTransaction(db, ctx, async (trx) => {
        if (await notificationStore.markRead(trx, callerUserId(ctx), id, nowSeconds(clock))) await events.record(trx, ctx, 'notification.read', id);
      });
    },
  };
}

export type NotificationService = ReturnType<typeof createNotificationService>;
