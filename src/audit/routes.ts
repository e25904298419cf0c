import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { workspaceCtx } from '../http/context.js';
import { AuditEventList, ListAuditEventsQuery } from './schemas.js';
import type { AuditService } from './service.js';

export function auditRoutes(app: App, audit: AuditService): void {
  app.get(
    '/audit_events',
    {
      config: { scope: 'workspace', tokenScope: 'audit:read' },
      schema: {
        operationId: 'listAuditEvents',
        tags: ['audit'],
        summary: "The workspace's audit log, newest first (owner or admin)",
        description:
          'Every write, every secret access and every sign-in is recorded as an event in the same transaction as its effect: an event exists exactly when its change committed. Events never hold a secret payload, a token or a password. Kept WSP_AUDIT_RETENTION_DAYS days (365 by default). Filters combine; a cursor belongs to the filters it was made with.',
        headers: requestHeaders(),
        querystring: ListAuditEventsQuery,
        response: { 200: AuditEventList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => audit.list(workspaceCtx(request), request.query),
  );
}
