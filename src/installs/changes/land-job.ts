import type { Job, JobDefinition } from '../../jobs/runner.js';
import type { InstallDeps } from '../install-deps.js';
import { installStore } from '../store.js';
import { landRunningRestores } from '../renders/landing.js';
import { CHANGE_REQUEST_LAND, type ChangeRequestLand } from '../job-kinds.js';

/**
 * The branch move a merge owes (docs/spec-gaps.md, "Repository change requests", "How the merge is
 * one transaction"). The merge commits its rows first and moves `main` right after; a process
 * that dies in between (or finds the branch locked) leaves `main` behind rows that say merged.
 * Every later writer of the branch lands it first, but an install nobody writes to would keep a
 * `main` that disagrees with its rows: this job, queued in the merge's transaction to run a little
 * later, lands it whichever worker is alive (the restarted server, another instance), as a
 * restore's job lands a restore. Safe to repeat: a landed head is not moved again, and `main` only
 * ever moves forward by compare-and-swap (`landCommit`).
 */
export function changeRequestJobs(deps: Pick<InstallDeps, 'db' | 'repos' | 'log'>): JobDefinition<ChangeRequestLand>[] {
  const { db, repos, log } = deps;
  const run = async (job: Job<ChangeRequestLand>) => {
    const { install_id: installId, change_request_id: id } = job.payload;
    const landings = await db.transaction().execute(async (trx) => {
      // A deleted install's repository is being removed: nothing is owed to it.
      if (!(await installStore.lock(trx, installId))) return null;
      // A busy branch throws: the job is tried again.
      return landRunningRestores(trx, repos, installId);
    });
    const landing = landings === null ? 'install_deleted' : (landings.get(id) ?? 'already_landed');
    if (landing === 'landed') log.warn({ changeRequestId: id, installId }, 'merged change request landed on main by its job (the merge did not move main itself)');
    if (landing === 'elsewhere')
      log.error({ changeRequestId: id, installId }, 'merged change request not landed: main moved to a history without it (rewritten outside the platform); it is not forced in');
    return { change_request_id: id, landing };
  };
  return [{ kind: CHANGE_REQUEST_LAND, run }];
}
