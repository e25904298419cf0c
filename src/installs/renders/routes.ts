import type { App } from '../../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../../http/schemas.js';
import { workspaceCtx } from '../../http/context.js';
import { InstallParams } from '../schemas.js';
import { ListRendersQuery, Render, RenderList, RenderParams } from './schemas.js';
import type { RenderService } from './service.js';

export function renderRoutes(app: App, renders: RenderService): void {
  app.get(
    '/installs/:id/renders',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read' },
      schema: {
        operationId: 'listInstallRenders',
        tags: ['installs'],
        summary: "An install's renders, newest first",
        headers: requestHeaders(),
        params: InstallParams,
        querystring: ListRendersQuery,
        response: { 200: RenderList, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => renders.listForInstall(workspaceCtx(request), request.params.id, request.query.limit, request.query.cursor),
  );

  app.get(
    '/renders/:id',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read' },
      schema: {
        operationId: 'getRender',
        tags: ['installs'],
        summary: 'A render',
        description: 'States: `queued` → `running` → `succeeded` | `failed`; a queued render is `superseded` when a newer one is made, a running one when a newer one reaches the branch first.',
        headers: requestHeaders(),
        params: RenderParams,
        response: { 200: Render, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => renders.get(workspaceCtx(request), request.params.id),
  );
}
