import type { ServiceDeps } from '../service-deps.js';
import type { JobDefinition } from '../jobs/runner.js';
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
