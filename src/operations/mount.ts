import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { createOperationService } from './service.js';
import { operationRoutes } from './routes.js';

export function mountOperations(app: App, deps: ServiceDeps): void {
  operationRoutes(app, createOperationService(deps));
}
