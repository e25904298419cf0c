import type { ServiceDeps } from '../service-deps.js';
import type { WorkspaceContext } from '../auth/principal.js';
import { nowSeconds } from '../shared/clock.js';
import { pathWorkspace } from '../auth/workspace-context.js';
import { installQuotaUsage } from '../installs/quota-usage.js';
import { liveTokenCount } from '../tokens/service.js';
import { webhookCount } from '../webhooks/service.js';
import { identity } from '../identity/service.js';
import { userIdOf } from '../auth/principal.js';

/** The workspace's quotas and how much of each it uses: counted from the areas that hold them. */
export function createQuotaService({ db, clock, config }: Pick<ServiceDeps, 'db' | 'clock' | 'config'>) {
  return {
    async figures(ctx: WorkspaceContext, rawId: string) {
      pathWorkspace(ctx, rawId);
      const now = nowSeconds(clock);
      const { quotas } = config;
      const installs = await installQuotaUsage(db, ctx.workspaceId, now);
      const user = userIdOf(ctx.principal);
      return {
        renders_per_hour: { limit: quotas.rendersPerHour, used: installs.rendersLastHour },
        api_tokens: { limit: quotas.apiTokens, used: await liveTokenCount(db, ctx.workspaceId, now) },
        webhooks: { limit: quotas.webhooks, used: await webhookCount(db, ctx.workspaceId) },
        render_output_bytes: { limit: quotas.renderOutputBytes },
        repository_bytes: { limit: quotas.repositoryBytes, used: installs.largestRepository?.bytes ?? 0, install_id: installs.largestRepository?.installId ?? null },
        workspace_repository_bytes: { limit: quotas.workspaceRepositoryBytes, used: installs.repositoriesTotal },
        workspaces_per_user: { limit: quotas.workspacesPerUser, used: user === null ? null : await identity.ownedWorkspaceCount(db, user) },
      };
    },
  };
}

export type QuotaService = ReturnType<typeof createQuotaService>;
