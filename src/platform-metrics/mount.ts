import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { createPlatformMetricsService } from './service.js';
import { platformMetricsRoutes } from './routes.js';

export function mountPlatformMetrics(app: App, deps: ServiceDeps): void {
  platformMetricsRoutes(app, createPlatformMetricsService(deps));
}
