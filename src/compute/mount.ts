import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { computeDeps } from './compute-deps.js';
import { createComputeConfigService } from './configs/service.js';
import { computeConfigRoutes } from './configs/routes.js';
import { createMachineService } from './machines/service.js';
import { machineRoutes } from './machines/routes.js';
import { createSuspensionService } from './suspensions/service.js';
import { suspensionRoutes } from './suspensions/routes.js';
import { catalogRoutes } from './catalog-routes.js';
import { createClusterService } from './clusters/service.js';
import { clusterRoutes } from './clusters/routes.js';
import { regionRoutes } from './regions/routes.js';

/** The compute area's routes: the provider's catalog, configs, machines, suspensions, regions, clusters (its jobs: ./job-definitions.ts). */
export function mountCompute(app: App, deps: ServiceDeps): void {
  const area = computeDeps(deps);
  computeConfigRoutes(app, createComputeConfigService(area), area.accounts.providerId);
  machineRoutes(app, createMachineService(area));
  suspensionRoutes(app, createSuspensionService(area));
  catalogRoutes(app, area.catalog);
  regionRoutes(app, area.catalog);
  clusterRoutes(app, createClusterService(area));
}
