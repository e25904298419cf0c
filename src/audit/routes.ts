import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { workspaceCtx } from '../http/context.js';
import { AuditEventList, ListAuditEventsQuery, ListMyEventsQuery } from './schemas.js';
import { requestCtx } from '../http/context.js';
import type { AuditService } from './service.js';
import { guarded } from '../auth/roles.js';

export function auditRoutes(app: App, audit: AuditService): void {
  app.get(
    '/audit_events',
    {
      config: { scope: 'workspace', ...guarded('audit.read'), tokenScope: 'audit:read' },
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

  app.get(
    '/me/events',
    {
      config: { scope: 'user' },
      schema: {
        operationId: 'listMeEvents',
        tags: ['audit'],
        summary: "The caller's own security log, newest first: sign-ins, sessions, device approvals",
        description:
          'The events of the signed-in person that belong to no workspace: their sign-ins (`session.created`), sign-ins that failed naming their account (`session.failed`, with the address and client that tried), sessions ended, device sign-ins approved or denied, and their address proven or released. Each with the IP address and user agent of the request. A user route: a workspace API token is 403 (7024). Kept as long as the audit log. Filters combine; a cursor belongs to the filters it was made with.',
        headers: requestHeaders(),
        querystring: ListMyEventsQuery,
        response: { 200: AuditEventList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => audit.listMine(requestCtx(request), request.query),
  );
}
