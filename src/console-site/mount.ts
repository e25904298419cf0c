import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { consoleRoutes } from './routes.js';

export function mountConsole(app: App, _deps: ServiceDeps): void {
  consoleRoutes(app);
}
