import type { App } from './http/fastify-types.js';
import type { ServiceDeps } from './deps.js';
import { createTokenService } from './tokens/service.js';
import { tokenRoutes } from './tokens/routes.js';
import { identityRoutes } from './identity/routes.js';
import { createWorkspaceService } from './workspaces/service.js';
import { workspaceRoutes } from './workspaces/routes.js';
import { createOperationService } from './operations/service.js';
import { operationRoutes } from './operations/routes.js';
import { registerMaintenance } from './jobs/maintenance.js';
import { installsArea } from './installs/area.js';
import { dashboardsArea } from './dashboards/area.js';
import { createNotificationService } from './notifications/service.js';
import { notificationRoutes } from './notifications/routes.js';
import { registerCompute } from './compute/index.js';
import { createSecretService } from './secrets/service.js';
import { secretRoutes } from './secrets/routes.js';

/** Builds each area's service and mounts its routes under /v1. */
export function registerAreas(app: App, deps: ServiceDeps): void {
  identityRoutes(app, deps.db);
  workspaceRoutes(app, createWorkspaceService(deps));
  tokenRoutes(app, createTokenService(deps));
  operationRoutes(app, createOperationService(deps));
  notificationRoutes(app, createNotificationService(deps));
  const secrets = createSecretService(deps);
  secretRoutes(app, secrets);
  // A master key this database was not set up with stops the start, with a clear message.
  app.addHook('onReady', secrets.verifyMasterKey);
  registerCompute(app, deps, secrets);
  installsArea(app, deps);
  dashboardsArea(app, deps);
  registerMaintenance(deps);
}
