import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { installDeps } from './install-deps.js';
import { createPackageService } from './packages/service.js';
import { packageRoutes } from './packages/routes.js';
import { createRenderService } from './renders/service.js';
import { renderRoutes } from './renders/routes.js';
import { createInstallService } from './service.js';
import { createRestoreService } from './restore.js';
import { installRoutes } from './routes.js';
import { createRepositoryService } from './repository-service.js';
import { repositoryRoutes } from './repository-routes.js';
import { createChangeRequestService } from './changes/service.js';
import { changeRequestRoutes } from './changes/routes.js';

/** Packages, installs and renders (one history): their routes (the jobs that render into git: ./job-definitions.ts). */
export function mountInstalls(app: App, deps: ServiceDeps): void {
  const area = installDeps(deps);
  packageRoutes(app, createPackageService(area));
  installRoutes(app, createInstallService(area), createRestoreService(area));
  repositoryRoutes(app, createRepositoryService(area));
  renderRoutes(app, createRenderService(area));
  changeRequestRoutes(app, createChangeRequestService(area));
}
