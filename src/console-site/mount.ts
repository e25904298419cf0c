import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../deps.js';
import { consoleRoutes } from './routes.js';

export function mountConsole(app: App, _deps: ServiceDeps): void {
  consoleRoutes(app);
}
