import type { ServiceDeps } from '../service-deps.js';
import { userIdOf, type RequestContext, type WorkspaceContext } from '../auth/principal.js';
import { ApiError } from '../shared/errors.js';
import { requireRoleOfUser } from '../auth/workspace-context.js';
import { pageById } from '../shared/cursor.js';
import { canonicalJson } from '../shared/canonical-json.js';
import { nowSeconds } from '../shared/clock.js';
import { auditStore } from './store.js';
import { toWireEvent } from '../events/wire.js';
import { minuteCountsStore } from '../events/minute-counts.js';
import type { ListAuditEventsQuery, ListMyEventsQuery } from './schemas.js';
import { ACCOUNT_EVENT_TYPES } from '../events/event-type-schemas.js';

export type AuditServiceDeps = Pick<ServiceDeps, 'db' | 'cursors' | 'clock' | 'config'>;

/** Events are deleted this many at a time by the purge, so no one statement holds the database long. */
const PURGE_BATCH = 5000;

/** The audit log (docs/spec-gaps.md, "Events and the audit log"): a workspace's events, for its owners and admins and `audit:read` tokens. */
export function createAuditService({ db, cursors, clock, config }: AuditServiceDeps) {
  return {
    list(ctx: WorkspaceContext, q: ListAuditEventsQuery) {
      // Tokens are judged by their scope (audit:read, in the pipeline); users by their role.
      requireRoleOfUser(ctx, ['owner', 'admin']);
      const filter = { type: q.type, actorId: q.actor_id?.toLowerCase(), resourceId: q.resource_id?.toLowerCase(), since: q.since, until: q.until };
      // A cursor belongs to its filters: one made under others is refused (422).
      const list = `audit:${ctx.workspaceId}:${canonicalJson(filter)}`;
      return pageById(cursors, list, { limit: q.limit, cursor: q.cursor }, (after, take) => auditStore.page(db, ctx.workspaceId, filter, take, after), toWireEvent);
    },

    /** The caller's own security log (GET /v1/me/events): a person's events of no workspace. */
    listMine(ctx: RequestContext, q: ListMyEventsQuery) {
      // A person's log: a workspace API token has no person (403 7024).
      const userId = userIdOf(ctx.principal);
      if (!userId) throw new ApiError('USER_REQUIRED');
      const filter = { type: q.type, since: q.since, until: q.until };
      const list = `me-events:${userId}:${canonicalJson(filter)}`;
      return pageById(cursors, list, { limit: q.limit, cursor: q.cursor }, (after, take) => auditStore.pageOfUser(db, userId, ACCOUNT_EVENT_TYPES, filter, take, after), toWireEvent);
    },

    /** Deletes events older than the retention, batch after batch; returns how many. */
    async purge(): Promise<number> {
      const before = nowSeconds(clock) - config.auditRetentionDays * 86_400;
      let total = 0;
      for (;;) {
        const n = await auditStore.purgeBatch(db, before, PURGE_BATCH);
        total += n;
        if (n < PURGE_BATCH) break;
      }
      await minuteCountsStore.purge(db, before);
      return total;
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
