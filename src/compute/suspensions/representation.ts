import type { ComputeSuspensionsTable } from '../tables.js';

/** A stored suspension as the spec shows it. */
export function toSuspension(row: ComputeSuspensionsTable) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    cluster_id: row.cluster_id,
    server_type: row.server_type,
    location: row.location,
    hostname: row.hostname,
    provider_suspend_data: { provider: row.provider, snapshot_id: row.snapshot_id, size_gb: row.size_gb },
    monthly_cost_cents: row.monthly_cost_cents,
    expires_at: row.expires_at,
    created_at: row.created_at,
    reason: row.reason,
  };
}
