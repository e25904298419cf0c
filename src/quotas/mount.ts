import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { createQuotaService } from './service.js';
import { quotaRoutes } from './routes.js';

export function mountQuotas(app: App, deps: ServiceDeps): void {
  quotaRoutes(app, createQuotaService(deps));
}
