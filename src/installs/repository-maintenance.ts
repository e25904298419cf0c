import type { JobDefinition } from '../jobs/runner.js';
import type { InstallDeps } from './install-deps.js';
import { installStore } from './store.js';
import { renderStore } from './renders/store.js';
import { REPOSITORY_MAINTENANCE } from './job-kinds.js';

/** Unreferenced objects younger than this are kept: a render writes its tree before its commit names it. */
export const PRUNE_AFTER_SECONDS = 3600;

/**
 * Every WSP_REPOSITORY_GC_HOURS: each install's repository is packed (`git gc`), what nothing
 * references for an hour is deleted (objects of renders that failed on a quota), and its size is
 * recorded for the quota figures. One repository failing is logged and the others go on.
 */
export function repositoryMaintenanceJobs(deps: InstallDeps): JobDefinition[] {
  const { db, repos, log, config } = deps;
  const run = async () => {
    let maintained = 0;
    let failed = 0;
    let skipped = 0;
    for (let after = ''; ;) {
      const page = await installStore.idsAfter(db, after, 100);
      if (page.length === 0) break;
      for (const { id } of page) {
        // git gc removes the object directories it empties, under the feet of a render writing
        // its objects there (it then fails an attempt and is retried): a repository with a render
        // under way waits for the next period.
        if (!(await repos.exists(id)) || (await renderStore.underWay(db, id))) {
          skipped++;
          continue;
        }
        try {
          await repos.maintain(id, PRUNE_AFTER_SECONDS);
          await installStore.update(db, id, { repository_bytes: await repos.sizeBytes(id) });
          maintained++;
        } catch (err) {
          failed++;
          log.error({ err, install: id }, 'repository maintenance failed');
        }
      }
      after = page.at(-1)!.id;
    }
    return { repositories: maintained, failed, skipped };
  };
  return [{ kind: REPOSITORY_MAINTENANCE, everySeconds: config.repositoryGcHours * 3600, run }];
}
