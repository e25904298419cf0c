import type { ServiceDeps } from '../service-deps.js';
import type { JobDefinition } from '../jobs/runner.js';
import { computeDeps } from './compute-deps.js';
import { computeJobDefinitions } from './jobs/register.js';

/** The compute area's background work: machine jobs, snapshot deletions, the expiry scan. */
export function computeJobs(deps: ServiceDeps): JobDefinition[] {
  return computeJobDefinitions(computeDeps(deps));
}
