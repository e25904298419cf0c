/**
 * What other areas use of clusters (docs/spec-gaps.md, "Clusters and regions"): placing something on a cluster inside the
 * caller's transaction. The cluster is locked (src/compute/clusters/store.ts, `lock`), so a
 * deletion of the cluster at the same moment either sees what was placed (409) or happened first
 * (the placement's 404).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import { clusterStore } from './store.js';

/** The cluster, locked for the rest of the transaction; undefined when the workspace has none such. */
export async function lockClusterForPlacement(trx: Kysely<DB>, workspaceId: string, clusterId: string): Promise<{ id: string; region: string | null } | undefined> {
  const row = await clusterStore.lock(trx, workspaceId, clusterId);
  return row && { id: row.id, region: row.region };
}

/** The cluster's name and region (no lock): what a check before a transaction needs. */
export async function clusterForPlacement(db: Kysely<DB>, workspaceId: string, clusterId: string): Promise<{ id: string; name: string; region: string | null } | undefined> {
  const row = await clusterStore.get(db, workspaceId, clusterId);
  return row && { id: row.id, name: row.name, region: row.region };
}

/** The workspace's default cluster's id, made on first use: where a machine without `cluster_id` goes. */
export function defaultClusterId(db: Kysely<DB>, workspaceId: string, now: number): Promise<string> {
  return clusterStore.defaultFor(db, workspaceId, now);
}

/** Whether the workspace has the cluster (no lock): a check before a transaction. */
export async function clusterExists(db: Kysely<DB>, workspaceId: string, clusterId: string): Promise<boolean> {
  return (await clusterStore.get(db, workspaceId, clusterId)) !== undefined;
}

/** The workspace's clusters' ids among `ids`: what a dashboard's default may name. */
export async function existingClusterIds(db: Kysely<DB>, workspaceId: string, ids: string[]): Promise<Set<string>> {
  return clusterStore.existing(db, workspaceId, ids);
}
