/**
 * What the platform metrics (src/platform-metrics) read of the compute area: its rows, read by
 * its own stores, so another area names none of its tables.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { machineStore } from './machines/store.js';
import { suspensionStore } from './suspensions/store.js';

/** The lives of the workspace's machines (of one cluster, or all) that overlap (from, until]: [start, end), end null while it lasts. */
export const machineLives = (db: Kysely<DB>, workspaceId: string, from: number, until: number, cluster: string | undefined) => machineStore.lives(db, workspaceId, from, until, cluster);

/** The suspensions (of one cluster, or all) that overlap (from, until]: [start, end), weighing their monthly cost in cents. */
export const suspensionSpans = (db: Kysely<DB>, workspaceId: string, from: number, until: number, cluster: string | undefined) => suspensionStore.overlapping(db, workspaceId, from, until, cluster);
