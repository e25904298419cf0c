import type { App } from '../http/fastify-types.js';
import type { ServiceDeps } from '../service-deps.js';
import { createAuditService } from './service.js';
import { auditRoutes } from './routes.js';

export function mountAudit(app: App, deps: ServiceDeps): void {
  auditRoutes(app, createAuditService(deps));
}
