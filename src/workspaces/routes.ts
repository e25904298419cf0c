import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { requestCtx, workspaceCtx } from '../http/context.js';
import { quoteEtag } from '../http/etag.js';
import { UpdateWorkspaceBody, Workspace, WorkspaceList, WorkspaceParams } from './schemas.js';
import type { WorkspaceService } from './service.js';

export function workspaceRoutes(app: App, workspaces: WorkspaceService): void {
  app.get(
    '/workspaces',
    {
      config: { scope: 'any' },
      schema: {
        tags: ['workspaces'],
        summary: "The caller's workspaces (a workspace API token sees its own)",
        headers: requestHeaders(),
        response: { 200: WorkspaceList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => workspaces.list(requestCtx(request)),
  );

  app.get(
    '/workspaces/:id',
    {
      config: { scope: 'workspace' },
      schema: {
        tags: ['workspaces'],
        summary: 'The workspace the call acts in',
        headers: requestHeaders(),
        params: WorkspaceParams,
        response: { 200: Workspace, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const ws = await workspaces.get(workspaceCtx(request), request.params.id);
      reply.header('etag', quoteEtag(ws.etag));
      return ws;
    },
  );

  app.patch(
    '/workspaces/:id',
    {
      config: { scope: 'workspace', roles: ['owner', 'admin'] },
      schema: {
        tags: ['workspaces'],
        summary: 'Rename the workspace (owner or admin; If-Match)',
        headers: requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' }),
        params: WorkspaceParams,
        body: UpdateWorkspaceBody,
        response: { 200: Workspace, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const ws = await workspaces.rename(workspaceCtx(request), request.params.id, request.body.name, request.headers['if-match']);
      reply.header('etag', quoteEtag(ws.etag));
      return ws;
    },
  );
}
