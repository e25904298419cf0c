import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../deps.js';
import { createNotificationService } from './service.js';
import { notificationRoutes } from './routes.js';

export function mountNotifications(app: App, deps: ServiceDeps): void {
  notificationRoutes(app, createNotificationService(deps));
}
