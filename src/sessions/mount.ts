import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { createSessionService } from './service.js';
import { sessionRoutes } from './routes.js';

export function mountSessions(app: App, deps: ServiceDeps): void {
  sessionRoutes(app, createSessionService({ ...deps, policy: deps.config.sessions }), { secureCookie: deps.config.publicUrl.startsWith('https:') });
}
