import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../deps.js';
import { createProviderAccounts, type SecretLookup } from './provider/accounts.js';
import type { ProviderAccounts } from './provider/types.js';
import { createComputeConfigService } from './configs/service.js';
import { computeConfigRoutes } from './configs/routes.js';
import { createMachineService } from './machines/service.js';
import { machineRoutes } from './machines/routes.js';
import { createSuspensionService } from './suspensions/service.js';
import { suspensionRoutes } from './suspensions/routes.js';
import { registerComputeJobs } from './jobs/register.js';
import { OffsetClock } from './clock.js';

/**
 * Mounts the compute area: configs, machines, suspensions and their background work.
 * `secrets` is the secrets area's service (bring-your-own provider accounts).
 */
export function registerCompute(app: App, deps: ServiceDeps, secrets: SecretLookup, accounts: ProviderAccounts = createProviderAccounts(deps.config.provider, deps.clock)): void {
  const offsetFile = deps.config.computeClockOffsetFile;
  if (offsetFile) deps.log.warn({ file: offsetFile }, 'WSP_COMPUTE_CLOCK_OFFSET_FILE is set: the compute area runs on a moved clock (for tests only)');
  const area = { ...deps, clock: offsetFile ? new OffsetClock(deps.clock, offsetFile) : deps.clock, accounts, secrets };
  computeConfigRoutes(app, createComputeConfigService(area), accounts.providerId);
  machineRoutes(app, createMachineService(area));
  suspensionRoutes(app, createSuspensionService(area));
  registerComputeJobs(area);
}
