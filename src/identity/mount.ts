import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { identityRoutes } from './routes.js';

export function mountIdentity(app: App, deps: ServiceDeps): void {
  identityRoutes(app, deps.db);
}
