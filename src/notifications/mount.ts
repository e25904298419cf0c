import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../deps.js';
import { createNotificationService } from './service.js';
import { notificationRoutes } from './routes.js';
import { NotificationStreams } from './stream.js';

export function mountNotifications(app: App, deps: ServiceDeps): void {
  const streams = new NotificationStreams(deps.db);
  // Before the server stops listening: open streams would otherwise hold the shutdown until its grace ends.
  app.addHook('preClose', async () => streams.closeAll());
  notificationRoutes(app, createNotificationService(deps), streams);
}
