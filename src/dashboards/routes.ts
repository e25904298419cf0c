import type { App } from '../http/fastify-types.js';
import { errorResponses, NoContent, requestHeaders } from '../http/schemas.js';
import { workspaceCtx } from '../http/context.js';
import { quoteEtag } from '../http/etag.js';
import { checkDashboardBodies } from './body-rules.js';
import { CreateDashboardBody, Dashboard, DashboardList, DashboardParams, ListDashboardsQuery, RevisionActionBody, UpdateDashboardBody } from './schemas/dashboard.js';
import type { DashboardService } from './service.js';
import type { RevisionService } from './revision-service.js';

const tags = ['dashboards'];

const WIDGET_RULES =
  'A widget without `widget_id` gets a new `wdg_<id>`; widget ids and filter keys are unique (422, 7104 and 7105). A snippet widget that newly pins a snippet (not carried over unchanged from the current revision) must name a snippet of the workspace (404 at its `snippet_id`), active (409, 7102), at its current etag (409, 7101, `metadata.current_etag`).';

export function dashboardRoutes(app: App, dashboards: DashboardService, revisions: RevisionService): void {
  checkDashboardBodies();
  app.post(
    '/dashboards',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:write', event: 'dashboard.created' },
      schema: {
        operationId: 'createDashboard',
        tags,
        summary: 'Create a dashboard and its first revision',
        description: `The first revision has \`source: manual\`, no parent and \`structural_diff: null\`. ${WIDGET_RULES}`,
        headers: requestHeaders({ idempotencyKey: 'optional' }),
        body: CreateDashboardBody,
        response: { 201: Dashboard, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const dashboard = await dashboards.create(workspaceCtx(request), request.body);
      return reply.code(201).header('etag', quoteEtag(dashboard.etag)).send(dashboard);
    },
  );

  app.get(
    '/dashboards',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:read' },
      schema: {
        operationId: 'listDashboards',
        tags,
        summary: "The workspace's dashboards, newest first",
        headers: requestHeaders(),
        querystring: ListDashboardsQuery,
        response: { 200: DashboardList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => dashboards.list(workspaceCtx(request), request.query.limit, request.query.cursor),
  );

  app.get(
    '/dashboards/:id',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:read' },
      schema: {
        operationId: 'getDashboard',
        tags,
        summary: 'A dashboard: the content of its current revision',
        headers: requestHeaders(),
        params: DashboardParams,
        response: { 200: Dashboard, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const dashboard = await dashboards.get(workspaceCtx(request), request.params.id);
      reply.header('etag', quoteEtag(dashboard.etag));
      return dashboard;
    },
  );

  app.patch(
    '/dashboards/:id',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:write', event: 'dashboard.updated' },
      schema: {
        operationId: 'updateDashboard',
        tags,
        summary: 'Change a dashboard (If-Match): a new revision with its structural diff',
        description: `Each field given replaces that field; \`summary\` describes the new revision (\`source: manual\`). A PATCH that changes nothing makes no revision and keeps the etag. ${WIDGET_RULES}`,
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: DashboardParams,
        body: UpdateDashboardBody,
        response: { 200: Dashboard, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const dashboard = await dashboards.update(workspaceCtx(request), request.params.id, request.body, request.headers['if-match']);
      reply.header('etag', quoteEtag(dashboard.etag));
      return dashboard;
    },
  );

  app.delete(
    '/dashboards/:id',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:write', event: 'dashboard.deleted' },
      schema: {
        operationId: 'deleteDashboard',
        tags,
        summary: 'Delete a dashboard and its revisions (If-Match)',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: DashboardParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      await dashboards.delete(workspaceCtx(request), request.params.id, request.headers['if-match']);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/dashboards/:id(^[^:]+)::reset',
    {
      config: { scope: 'workspace', tokenScope: 'dashboards:write', event: 'dashboard.reset' },
      schema: {
        operationId: 'resetDashboard',
        tags,
        summary: 'Reset a workspace_overview dashboard to the built-in default layout (If-Match)',
        description:
          'Its filter definitions, default filter values and widgets become the built-in ones in a new revision (`source: reset`); name, description and purpose stay. Another purpose is 409 (7103). The body, `{summary}`, may be left out.',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: DashboardParams,
        body: RevisionActionBody,
        response: { 200: Dashboard, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const dashboard = await revisions.reset(workspaceCtx(request), request.params.id, request.headers['if-match'], request.body?.summary ?? null);
      reply.header('etag', quoteEtag(dashboard.etag));
      return dashboard;
    },
  );
}
