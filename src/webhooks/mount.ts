import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { createWebhookService } from './service.js';
import { webhookRoutes } from './routes.js';

/** The webhook routes. Deliveries are made by every process's events, wherever they are recorded: the fan-out is subscribed by createDeps (src/service-deps.ts). */
export function mountWebhooks(app: App, deps: ServiceDeps): void {
  webhookRoutes(app, createWebhookService(deps));
}
