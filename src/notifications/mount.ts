import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { liveSessionIds } from '../sessions/service.js';
import { identity } from '../identity/service.js';
import { createNotificationService } from './service.js';
import { notificationRoutes } from './routes.js';
import { NotificationStreams } from './stream.js';

export function mountNotifications(app: App, deps: ServiceDeps): void {
  const { db, clock, config } = deps;
  const streams = new NotificationStreams({
    db,
    clock,
    limits: config.streams,
    checks: {
      liveSessions: (ids, now) => liveSessionIds(db, ids, now, config.sessions),
      memberships: (userIds) => identity.membershipsOf(db, userIds),
    },
  });
  // Before the server stops listening: open streams would otherwise hold the shutdown until its grace ends.
  app.addHook('preClose', async () => streams.closeAll());
  notificationRoutes(app, createNotificationService(deps), streams);
}
