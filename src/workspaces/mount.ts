import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { createWorkspaceService } from './service.js';
import { workspaceRoutes } from './routes.js';

export function mountWorkspaces(app: App, deps: ServiceDeps): void {
  workspaceRoutes(app, createWorkspaceService(deps));
}
