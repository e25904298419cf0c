import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../deps.js';
import { repoRoot } from '../config.js';
import { GitCliStorage } from '../git/git-cli-storage.js';
import { createPackageService } from './packages/service.js';
import { packageRoutes } from './packages/routes.js';
import { createRenderService } from './renders/service.js';
import { renderRoutes } from './renders/routes.js';
import { registerRenderJobs } from './renders/jobs.js';
import { createInstallService } from './service.js';
import { createRestoreService } from './restore.js';
import { installRoutes } from './routes.js';
import { createRepositoryService } from './repository-service.js';
import { repositoryRoutes } from './repository-routes.js';
import { registerAutoUpdates } from './auto-updates.js';

/** Packages, installs and renders: their routes, and the jobs that render into git. */
export function installsArea(app: App, deps: ServiceDeps): void {
  const installDeps = { ...deps, repos: new GitCliStorage(repoRoot(deps.config)) };
  packageRoutes(app, createPackageService(deps));
  installRoutes(app, createInstallService(installDeps), createRestoreService(installDeps));
  repositoryRoutes(app, createRepositoryService(installDeps));
  renderRoutes(app, createRenderService(deps));
  registerRenderJobs(installDeps);
  registerAutoUpdates(installDeps);
}
