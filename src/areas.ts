import type { App } from './http/fastify-types.js';
import type { ServiceDeps } from './service-deps.js';
import { mountIdentity } from './identity/mount.js';
import { mountWorkspaces } from './workspaces/mount.js';
import { mountTokens } from './tokens/mount.js';
import { mountQuotas } from './quotas/mount.js';
import { mountAccounts } from './accounts/mount.js';
import { mountSessions } from './sessions/mount.js';
import { mountOperations } from './operations/mount.js';
import { mountNotifications } from './notifications/mount.js';
import { mountSecrets } from './secrets/mount.js';
import { mountCompute } from './compute/mount.js';
import { mountInstalls } from './installs/mount.js';
import { mountDashboards } from './dashboards/mount.js';
import { mountOauth } from './oauth/mount.js';
import { mountConsole } from './console-site/mount.js';
import { mountAudit } from './audit/mount.js';
import { mountWebhooks } from './webhooks/mount.js';
import { mountPlatformMetrics } from './platform-metrics/mount.js';

/**
 * Every area's HTTP face, each mounted the same way: `mount<Area>(app, deps)` builds the area's
 * services and registers its routes. Background work is composed apart (src/worker.ts).
 */
export const V1_AREAS: readonly ((app: App, deps: ServiceDeps) => void)[] = [
  mountIdentity,
  mountWorkspaces,
  mountQuotas,
  mountTokens,
  mountSessions,
  mountAccounts,
  mountOperations,
  mountNotifications,
  mountSecrets,
  mountCompute,
  mountInstalls,
  mountDashboards,
  mountPlatformMetrics,
  mountAudit,
  mountWebhooks,
];

/** Outside /v1 (`/device`, `/.well-known/...`): mounted at the root. */
export const ROOT_AREAS: readonly ((app: App, deps: ServiceDeps) => void)[] = [mountOauth, mountConsole];
