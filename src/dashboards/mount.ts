import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { createSnippetService } from './snippets/service.js';
import { snippetRoutes } from './snippets/routes.js';
import { createDashboardService } from './service.js';
import { createRevisionService } from './revision-service.js';
import { dashboardRoutes } from './routes.js';
import { revisionRoutes } from './revision-routes.js';
import { computeResourceNames } from '../compute/resource-names.js';

/** Snippets, dashboards and their revisions. */
export function mountDashboards(app: App, deps: ServiceDeps): void {
  snippetRoutes(app, createSnippetService(deps));
  const revisions = createRevisionService(deps);
  dashboardRoutes(app, createDashboardService({ ...deps, names: computeResourceNames(deps) }), revisions);
  revisionRoutes(app, revisions);
}
