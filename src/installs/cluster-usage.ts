/**
 * What the compute area reads of installs to delete a cluster (docs/spec-gaps.md, "Clusters and regions"): the live
 * installs placed on it, read by this area's own store, so that area names none of its tables.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { installStore } from './store.js';

/** The workspace's live installs on the cluster, oldest first: at most `limit` ids, and how many there are. */
export const installsOnCluster = (db: Kysely<DB>, workspaceId: string, clusterId: string, limit: number) => installStore.onCluster(db, workspaceId, clusterId, limit);
