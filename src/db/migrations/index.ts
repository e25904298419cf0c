import type { Migration, MigrationProvider } from 'kysely';
import * as foundation from './0001_foundation.js';
import * as jobs from './0002_jobs.js';
import * as dashboards from './0003_dashboards.js';
import * as secrets from './0004_secrets.js';
import * as installs from './0005_installs.js';
import * as compute from './0006_compute.js';
import * as notifications from './0007_notifications.js';
import * as device from './0008_device.js';
import * as computeCleanup from './0009_compute_cleanup.js';
import * as idempotencyClaimToken from './0010_idempotency_claim_token.js';
import * as sessionLifecycle from './0011_session_lifecycle.js';
import * as quotas from './0012_quotas.js';
import * as accounts from './0013_accounts.js';
import * as tokenScopes from './0014_token_scopes.js';
import * as requestLimits from './0015_request_limits.js';
import * as events from './0016_events.js';
import * as webhooks from './0017_webhooks.js';
import * as listVersions from './0018_list_versions.js';
import * as eventCounts from './0019_event_counts.js';
import * as revisionListVersions from './0020_revision_list_versions.js';
import * as accountVerification from './0021_account_verification.js';
import * as deliveryPool from './0022_delivery_pool.js';
import * as workspaceLimits from './0023_workspace_limits.js';
import * as viewerRole from './0024_viewer_role.js';
import * as deletedInstalls from './0025_deleted_installs.js';
import * as deliveryAttempts from './0026_delivery_attempts.js';
import * as changeRequests from './0027_change_requests.js';
import * as clusters from './0028_clusters.js';
import * as listIndexes from './0029_list_indexes.js';
import * as eventResourceType from './0030_event_resource_type.js';
import * as eventPrefix from './0031_event_prefix.js';
import * as accountEventKinds from './0032_account_event_kinds.js';
import * as fairClaims from './0033_fair_claims.js';
import * as renderPrefix from './0034_render_prefix.js';
import * as machineLifePrefix from './0035_machine_life_prefix.js';

/** Every migration, in order. Listed statically so the built package needs no directory scan. */
const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_jobs': jobs,
  '0003_dashboards': dashboards,
  '0004_secrets': secrets,
  '0005_installs': installs,
  '0006_compute': compute,
  '0007_notifications': notifications,
  '0008_device': device,
  '0009_compute_cleanup': computeCleanup,
  '0010_idempotency_claim_token': idempotencyClaimToken,
  '0011_session_lifecycle': sessionLifecycle,
  '0012_quotas': quotas,
  '0013_accounts': accounts,
  '0014_token_scopes': tokenScopes,
  '0015_request_limits': requestLimits,
  '0016_events': events,
  '0017_webhooks': webhooks,
  '0018_list_versions': listVersions,
  '0019_event_counts': eventCounts,
  '0020_revision_list_versions': revisionListVersions,
  '0021_account_verification': accountVerification,
  '0022_delivery_pool': deliveryPool,
  '0023_workspace_limits': workspaceLimits,
  '0024_viewer_role': viewerRole,
  '0025_deleted_installs': deletedInstalls,
  '0026_delivery_attempts': deliveryAttempts,
  '0027_change_requests': changeRequests,
  '0028_clusters': clusters,
  '0029_list_indexes': listIndexes,
  '0030_event_resource_type': eventResourceType,
  '0031_event_prefix': eventPrefix,
  '0032_account_event_kinds': accountEventKinds,
  '0033_fair_claims': fairClaims,
  '0034_render_prefix': renderPrefix,
  '0035_machine_life_prefix': machineLifePrefix,
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
