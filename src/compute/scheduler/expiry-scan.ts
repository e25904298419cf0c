import { nowSeconds } from '../../shared/clock.js';
import { identity } from '../../identity/service.js';
import { notify } from '../../notifications/service.js';
import { suspensionStore } from '../suspensions/store.js';
import { JOB, type SuspensionJob } from '../jobs/kinds.js';
import type { ComputeJobDeps } from '../jobs/common.js';
import { expiryNotice, INFO_WITHIN, NOTICE, WARNING_WITHIN } from './expiry-notice.js';
import { endSuspension } from './expire-suspension.js';

/** Suspensions handled per scan; any beyond wait for the next one. */
const BATCH = 500;
/**
 * How often the deletion of an expired suspension's snapshot is queued again while the
 * provider has not confirmed it: one job (25 attempts, about 90 minutes) per period, until
 * the machine no longer records the snapshot.
 */
export const SNAPSHOT_DELETE_RETRY_SECONDS = 3 * 3600;

/**
 * The periodic scan: expiry notices to the workspace's owners and admins; the end of each
 * suspension whose retention is over (at once, here); and a job that deletes the snapshot
 * of each expired suspension whose machine still records one. Each notice is sent once: the
 * periodic job runs once per period across instances, `notices_sent` records what went out,
 * and a unique key in the notifications table holds even if two scans overlap.
 */
export function expiryScanJob(deps: ComputeJobDeps) {
  const { db, clock, jobs } = deps;
  return async () => {
    const now = nowSeconds(clock);
    // A job key of its own per retry period: a deletion that gave up is queued again next period.
    const period = Math.floor(now / SNAPSHOT_DELETE_RETRY_SECONDS);
    const deleteSnapshot = (suspensionId: string, trx = db) =>
      jobs.enqueue(trx, { kind: JOB.expireSuspension, payload: { suspensionId } satisfies SuspensionJob, dedupeKey: `${JOB.expireSuspension}:${suspensionId}:${period}` });
    let notices = 0;
    let expired = 0;
    let deletions = 0;
    for (const s of await suspensionStore.due(db, now, INFO_WITHIN, WARNING_WITHIN, BATCH)) {
      if (s.expires_at <= now) {
        // Ended here rather than by the job: an expiry that finds the suspension being
        // resumed changes nothing, and the next scan tries again if that resume fails.
        await db.transaction().execute(async (trx) => {
          if (!(await endSuspension(trx, s, now))) return;
          await deleteSnapshot(s.id, trx);
          expired++;
        });
        continue;
      }
      // Both thresholds already passed at the first look: only the warning is sent.
      const level = s.expires_at - now <= WARNING_WITHIN ? NOTICE.warning : NOTICE.info;
      if (s.notices_sent >= level) continue;
      const recipients = await identity.usersWithRoles(db, s.workspace_id, ['owner', 'admin']);
      await db.transaction().execute(async (trx) => {
        notices += await notify(trx, clock, expiryNotice(s, level, recipients, now));
        await suspensionStore.noteNotices(trx, s.id, level);
      });
    }
    for (const s of await suspensionStore.expiredWithSnapshot(db, BATCH)) {
      if ((await deleteSnapshot(s.id)) !== null) deletions++;
    }
    return { notices, expired, deletions };
  };
}
