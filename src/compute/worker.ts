import type { ServiceDeps } from '../deps.js';
import type { JobDefinition } from '../jobs/runner.js';
import { computeDeps } from './deps.js';
import { computeJobDefinitions } from './jobs/register.js';

/** The compute area's background work: machine jobs, snapshot deletions, the expiry scan. */
export function computeJobs(deps: ServiceDeps): JobDefinition[] {
  return computeJobDefinitions(computeDeps(deps));
}
