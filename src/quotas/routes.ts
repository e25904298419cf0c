import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { workspaceCtx } from '../http/context.js';
import { WorkspaceParams } from '../workspaces/schemas.js';
import { WorkspaceQuotas } from './schemas.js';
import type { QuotaService } from './service.js';

export function quotaRoutes(app: App, quotas: QuotaService): void {
  app.get(
    '/workspaces/:id/quotas',
    {
      config: {
        scope: 'workspace',
        tokenScope: null,
        tokenScopeWhy: {
          tokens: 'open',
          why: "its limits are the server's settings, the same for every workspace, and its uses are bare counts; the one id it shows (an install's) opens nothing without installs:read",
        },
        operationIdWhy: 'one answer holding every quota of the workspace, not one quota',
      },
      schema: {
        operationId: 'getWorkspaceQuotas',
        tags: ['workspaces'],
        summary: "The workspace's quotas and how much of each it uses",
        description: 'Quotas are operator settings (`WSP_QUOTA_*`), the same for every workspace of a server; any member or API token of the workspace may read them.',
        headers: requestHeaders(),
        params: WorkspaceParams,
        response: { 200: WorkspaceQuotas, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => quotas.figures(workspaceCtx(request), request.params.id),
  );
}
