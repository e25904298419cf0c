import type { ServiceDeps } from '../service-deps.js';
import type { JobDefinition, JobPool } from '../jobs/runner.js';
import type { Config } from '../config.js';
import { RENDER_RUN } from './job-kinds.js';
import { installDeps } from './install-deps.js';
import { renderJobs } from './renders/jobs.js';
import { autoUpdateJobs } from './auto-updates.js';
import { repositoryMaintenanceJobs } from './repository-maintenance.js';
import { installDeletionJobs } from './deletion.js';
import { changeRequestJobs } from './changes/land-job.js';

/** The installs area's background work: renders and restores into git, automatic updates, repository maintenance, deleted installs' repositories removed, merged change requests landed. */
export function installsJobs(deps: ServiceDeps): JobDefinition[] {
  const area = installDeps(deps);
  return [...renderJobs(area), ...autoUpdateJobs(area), ...repositoryMaintenanceJobs(area), ...installDeletionJobs(area), ...changeRequestJobs(area)];
}

/**
 * Renders' own slots, with a share per workspace (their jobs' group, src/installs/render-queue.ts)
 * equal to the workspace's render threads (WSP_RENDERS_PER_WORKSPACE): a slot never claims a
 * render that could only wait for one of its workspace's threads. In the default slots, a package
 * update queued its installs' renders one workspace after another, and two of the four slots held
 * a render of the same workspace waiting for its turn (docs/benchmarks.md, round fourteen). As many
 * slots as the default pool has, so renders take no more of a process than before; restores
 * (whose commit the request made) stay in the default slots, so that a fan-out does not queue them.
 */
export function renderJobPool(renders: Config['renders']): JobPool {
  return { name: 'renders', kinds: [RENDER_RUN], concurrency: RENDER_SLOTS, perGroup: renders.perWorkspace };
}

/** The render pool's slots in a process: the default pool's (src/jobs/runner.ts). */
const RENDER_SLOTS = 4;
