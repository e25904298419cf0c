import type { Job, JobDefinition } from '../jobs/runner.js';
import { RetryLaterError } from '../jobs/failure.js';
import type { InstallDeps } from './install-deps.js';
import { installStore } from './store.js';
import { INSTALL_REPOSITORY_DELETE, type InstallRepositoryDelete } from './job-kinds.js';

/** How soon a removal that waits for a canceled render's job looks again. */
const WAIT_FOR_RENDER_MS = 1000;

/**
 * The second half of DELETE /v1/installs/{id}: the install already reads 404 and its renders are
 * canceled (src/installs/service.ts); this removes its repository from disk. A render job that
 * was at work when the deletion committed may still write objects into the repository (a
 * write would make its directory again): the removal waits until no worker holds one of those
 * jobs (their next step sees the render canceled and stops). Safe to repeat: a repository
 * already gone is no error.
 */
export function installDeletionJobs(deps: Pick<InstallDeps, 'db' | 'clock' | 'jobs' | 'repos'>): JobDefinition<InstallRepositoryDelete>[] {
  const { db, clock, jobs, repos } = deps;
  const run = async (job: Job<InstallRepositoryDelete>) => {
    const { install_id: installId, wait_for_operation_ids: waitFor } = job.payload;
    const held = await jobs.heldFor(db, waitFor);
    if (held > 0) throw new RetryLaterError(`${held} canceled render job(s) of ${installId} still running`, clock.nowMs() + WAIT_FOR_RENDER_MS);
    await repos.remove(installId);
    // Its bytes no longer count against the workspace's quota of repository bytes.
    await installStore.update(db, installId, { repository_bytes: null });
    return { install_id: installId, repository_removed: true };
  };
  return [{ kind: INSTALL_REPOSITORY_DELETE, run }];
}
