import { nowSeconds } from '../../shared/clock.js';
import { identityStore } from '../../identity/store.js';
import { notify } from '../../notifications/service.js';
import { suspensionStore } from '../suspensions/store.js';
import { JOB, type SuspensionJob } from '../jobs/kinds.js';
import type { ComputeJobDeps } from '../jobs/common.js';
import { expiryNotice, INFO_WITHIN, NOTICE, WARNING_WITHIN } from './expiry-notice.js';

/** Suspensions handled per scan; any beyond wait for the next one. */
const BATCH = 500;

/**
 * The periodic scan: expiry notices to the workspace's owners and admins, and an expiry
 * job for each suspension whose retention is over. Each notice is sent once: the periodic
 * job runs once per period across instances, `notices_sent` records what went out, and a
 * unique key in the notifications table holds even if two scans overlap.
 */
export function expiryScanJob(deps: ComputeJobDeps) {
  const { db, clock, jobs } = deps;
  return async () => {
    const now = nowSeconds(clock);
    let notices = 0;
    let expiring = 0;
    for (const s of await suspensionStore.due(db, now, INFO_WITHIN, WARNING_WITHIN, BATCH)) {
      if (s.expires_at <= now) {
        await jobs.enqueue(db, { kind: JOB.expireSuspension, payload: { suspensionId: s.id } satisfies SuspensionJob, dedupeKey: `${JOB.expireSuspension}:${s.id}` });
        expiring++;
        continue;
      }
      // Both thresholds already passed at the first look: only the warning is sent.
      const level = s.expires_at - now <= WARNING_WITHIN ? NOTICE.warning : NOTICE.info;
      if (s.notices_sent >= level) continue;
      const recipients = (await identityStore.usersWithRoles(db, s.workspace_id, ['owner', 'admin'])).map((r) => r.user_id);
      await db.transaction().execute(async (trx) => {
        notices += await notify(trx, clock, expiryNotice(s, level, recipients, now));
        await suspensionStore.noteNotices(trx, s.id, level);
      });
    }
    return { notices, expiring };
  };
}
