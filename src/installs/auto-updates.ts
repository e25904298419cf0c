import type { Job, JobDefinition } from '../jobs/runner.js';
import { nowSeconds } from '../shared/clock.js';
import { ApiError, ErrorCodes } from '../shared/errors.js';
import { PermanentJobError, RetryLaterError } from '../jobs/failure.js';
import { newEtag } from '../shared/etag.js';
import { packageStore } from './packages/store.js';
import { compareSemver, isPrerelease } from './packages/semver.js';
import { installStore } from './store.js';
import { queueRender } from './render-queue.js';
import { VERSION_PUBLISHED, type VersionPublished } from './job-kinds.js';
import type { InstallServiceDeps } from './service.js';

/**
 * `automatic_updates_enabled`: when a package gets a version that is newer (SemVer precedence)
 * than an install's desired version and is not a pre-release, the install moves to it and a
 * render is queued, exactly as a PATCH of `desired_version_id` would. Safe to repeat: an
 * install already at or past the version is left alone.
 */
export function autoUpdateJobs(deps: InstallServiceDeps): JobDefinition<VersionPublished>[] {
  const { db, clock } = deps;
  const run = async (job: Job<VersionPublished>) => {
    const { workspace_id: workspaceId, package_id: packageId, version_id: versionId } = job.payload;
    const version = await packageStore.getVersion(db, workspaceId, versionId);
    if (!version || isPrerelease(version.semver)) return { updated_install_ids: [] };
    const updated: string[] = [];
    for (const candidate of await installStore.followingUpdates(db, workspaceId, packageId)) {
      if (compareSemver(version.semver, candidate.desired_semver) <= 0) continue;
      const moved = await db
        .transaction()
        .execute(async (trx) => {
          const install = await installStore.lock(trx, candidate.id);
          if (!install || install.automatic_updates_enabled !== 1 || compareSemver(version.semver, install.desired_semver) <= 0) return false;
          await queueRender(trx, deps, install, { versionId: version.id, valuesJson: install.values_json, authorId: null });
          await installStore.update(trx, install.id, { desired_version_id: version.id, etag: newEtag(), updated_at: nowSeconds(clock) });
          return true;
        })
        .catch((err: unknown) => {
          // Over the workspace's renders-per-hour quota: the rest of the installs move when it
          // frees a place (the job runs again then; those already moved are left alone).
          if (err instanceof ApiError && err.headers['Retry-After']) throw new RetryLaterError(err.message, clock.nowMs() + Number(err.headers['Retry-After']) * 1000);
          // The workspace's repositories are full: no install of it can move until space is freed.
          if (err instanceof ApiError && err.entries[0]?.code === ErrorCodes.WORKSPACE_REPOSITORIES_FULL.code) throw new PermanentJobError(err.message, ErrorCodes.WORKSPACE_REPOSITORIES_FULL.code);
          throw err;
        });
      if (moved) updated.push(candidate.id);
    }
    return { updated_install_ids: updated };
  };
  return [{ kind: VERSION_PUBLISHED, run }];
}
