import type { MachinesTable } from '../tables.js';

/** A stored machine as the API shows it. */
export function toMachine(row: MachinesTable) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    compute_config_id: row.compute_config_id,
    cluster_id: row.cluster_id,
    provider: row.provider,
    hostname: row.hostname,
    server_type: row.server_type,
    location: row.location,
    image: row.image,
    status: row.status,
    provider_server_id: row.provider_server_id,
    ipv4: row.ipv4,
    suspension_id: row.suspension_id,
    operation_id: row.operation_id,
    etag: row.etag,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type MachineView = ReturnType<typeof toMachine>;
