import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { workspaceCtx } from '../http/context.js';
import { quoteEtag } from '../http/etag.js';
import { Dashboard, DashboardParams, ListRevisionsQuery, RevisionActionBody, RevisionParams } from './schemas/dashboard.js';
import { DashboardRevision, RevisionList } from './schemas/revision.js';
import type { RevisionService } from './revision-service.js';
import { revisionListVersions, revisionListsOfWorkspace } from './revision-list-versions.js';

const tags = ['dashboards'];

export function revisionRoutes(app: App, revisions: RevisionService): void {
  app.get(
    '/dashboards/:id/revisions',
    {
      config: {
        scope: 'workspace',
        tokenScope: 'dashboards:read',
        versionedBy: (request) => revisionListVersions(workspaceCtx(request).workspaceId, (request.params as { id: string }).id),
        listWithCredential: (request) => ({ of: 'workspace', lists: revisionListsOfWorkspace((request.params as { id: string }).id) }),
      },
      schema: {
        operationId: 'listDashboardRevisions',
        tags,
        summary: "A dashboard's immutable revisions, newest first",
        description: '`snippet_etag_drift` is computed when read: one item per snippet widget whose snippet now has another etag or is not active.',
        headers: requestHeaders(),
        params: DashboardParams,
        querystring: ListRevisionsQuery,
        response: { 200: RevisionList, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => revisions.list(workspaceCtx(request), request.params.id, request.query.limit, request.query.cursor),
  );

  app.get(
    '/dashboards/:id/revisions/:revision_id',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:read' },
      schema: {
        operationId: 'getDashboardRevision',
        tags,
        summary: 'One revision of a dashboard',
        headers: requestHeaders(),
        params: RevisionParams,
        response: { 200: DashboardRevision, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => revisions.get(workspaceCtx(request), request.params.id, request.params.revision_id),
  );

  app.post(
    '/dashboards/:id/revisions/:revision_id(^[^:]+)::restore',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:write', event: 'dashboard.restored' },
      schema: {
        operationId: 'restoreDashboardRevision',
        tags,
        summary: "Restore a revision's content as a new revision (If-Match: the dashboard's etag)",
        description:
          'A new revision with `source: restore` and `restored_from_revision_id`; its diff is against the current revision. Archived snippets it uses are made active again; a deleted one blocks the restore (409, 7100, `metadata.widget_id` and `metadata.snippet_id` per widget). The body, `{summary}`, may be left out.',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: RevisionParams,
        body: RevisionActionBody,
        response: { 200: Dashboard, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const { id, revision_id } = request.params;
      const dashboard = await revisions.restore(workspaceCtx(request), id, revision_id, request.headers['if-match'], request.body?.summary ?? null);
      reply.header('etag', quoteEtag(dashboard.etag));
      return dashboard;
    },
  );
}
