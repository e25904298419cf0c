import type { InstallView } from './store.js';
import type { Install } from './schemas.js';

export function toInstall(row: InstallView): Install {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    package_id: row.package_id,
    current_version: row.current_version_id && row.current_semver !== null ? { id: row.current_version_id, semver: row.current_semver } : null,
    desired_version: { id: row.desired_version_id, semver: row.desired_semver },
    values: JSON.parse(row.values_json) as Record<string, unknown>,
    automatic_updates_enabled: row.automatic_updates_enabled === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
    etag: row.etag,
    cluster_id: row.cluster_id,
    last_render: row.last_render_id === null ? null : { id: row.last_render_id, state: row.last_render_state!, error: row.last_render_state === 'failed' ? row.last_render_message : null },
    delivery: row.delivery,
    required_approvals: row.required_approvals,
    open_change_request_id: row.open_change_request_id ?? null,
  };
}

/** Exactly the fields the spec shows for the install of a restore response. */
export function toRestoredInstall(row: InstallView) {
  // The spec's fields only: no last_render here (GET /v1/installs/{id} has it).
  const { id, current_version, desired_version, automatic_updates_enabled, updated_at, etag } = toInstall(row);
  return { id, current_version, desired_version, automatic_updates_enabled, updated_at, etag };
}
