import type { ServiceDeps } from '../deps.js';
import type { WorkspaceContext } from '../auth/principal.js';
import { requireRoleOfUser } from '../auth/workspace-context.js';
import { pageById } from '../shared/cursor.js';
import { canonicalJson } from '../shared/canonical-json.js';
import { nowSeconds } from '../shared/clock.js';
import { auditStore } from './store.js';
import { toWireEvent } from '../events/wire.js';
import { minuteCountsStore } from '../events/minute-counts.js';
import type { ListAuditEventsQuery } from './schemas.js';

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
