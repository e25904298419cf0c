/**
 * The compute area's tables, as stored: clusters, compute configs, machines and suspensions. Each
 * joins `DB` here, by declaration merging (src/db/tables.ts says why); the area's modules import
 * their row types from this file.
 */
declare module '../db/tables.js' {
  interface DB {
    clusters: ClustersTable;
    compute_configs: ComputeConfigsTable;
    machines: MachinesTable;
    compute_suspensions: ComputeSuspensionsTable;
    machine_life_prefix: MachineLifePrefixTable;
  }
}

export interface ClustersTable {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  /** The region its machines' configs must name; null for the default cluster (any region). */
  region: string | null;
  is_default: number;
  etag: string;
  created_at: number;
  updated_at: number;
}

export interface ComputeConfigsTable {
  id: string;
  workspace_id: string;
  name: string;
  provider: string;
  region: string;
  image: string;
  machine_type_filter: string;
  secret_id: string | null;
  etag: string;
  created_at: number;
  updated_at: number;
}

export type MachineStatus = 'creating' | 'running' | 'suspending' | 'suspended' | 'resuming' | 'deleting' | 'failed' | 'expired';

export interface MachinesTable {
  id: string;
  workspace_id: string;
  compute_config_id: string;
  cluster_id: string;
  provider: string;
  hostname: string;
  server_type: string;
  location: string;
  image: string;
  status: MachineStatus;
  provider_server_id: number | null;
  ipv4: string | null;
  /** The snapshot of a suspension under way or in force. */
  snapshot_id: number | null;
  suspension_id: string | null;
  /** The operation of the latest asynchronous change (create, suspend, resume). */
  operation_id: string | null;
  /**
   * JSON `{code, message}` (its failure) while a job that gave up still puts things right at the
   * provider (src/compute/jobs/common.ts); null otherwise.
   */
  cleanup: string | null;
  etag: string;
  created_at: number;
  updated_at: number;
}

/** active: listed; resuming: a resume is under way; resumed and expired: over. */
/** `deleted`: its machine is being (or was) deleted; over, like resumed and expired. */
export type SuspensionState = 'active' | 'resuming' | 'resumed' | 'expired' | 'deleted';

export interface ComputeSuspensionsTable {
  id: string;
  workspace_id: string;
  machine_id: string;
  cluster_id: string;
  server_type: string;
  location: string;
  hostname: string;
  provider: string;
  snapshot_id: number;
  size_gb: number;
  monthly_cost_cents: number;
  reason: 'manual' | 'downgrade';
  state: SuspensionState;
  /** Expiry notices sent so far: 0 none, 1 the 7-day info, 2 the 1-day warning. */
  notices_sent: number;
  expires_at: number;
  created_at: number;
  ended_at: number | null;
}

/** The running sum of machines alive under a key (`*`, `c:<cluster>`, `r:<region>`, `cr:<cluster>:<region>`) at the end of each second it changed (migration 0035). */
export interface MachineLifePrefixTable {
  workspace_id: string;
  key: string;
  at: number;
  p: number;
}
