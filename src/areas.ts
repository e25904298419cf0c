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

/** Builds each area's service and mounts its routes under /v1. */
export function registerAreas(app: App, deps: ServiceDeps): void {
  identityRoutes(app, deps.db);
  workspaceRoutes(app, createWorkspaceService(deps));
  tokenRoutes(app, createTokenService(deps));
  operationRoutes(app, createOperationService(deps));
  registerMaintenance(deps);
}
