import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../deps.js';
import { createWebhookService } from './service.js';
import { webhookRoutes } from './routes.js';
import { webhookFanOut } from './fan-out.js';

export function mountWebhooks(app: App, deps: ServiceDeps): void {
  // Every event of this server's requests makes its deliveries in its own transaction.
  deps.events.subscribe(webhookFanOut(deps));
  webhookRoutes(app, createWebhookService(deps));
}
