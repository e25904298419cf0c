/**
 * What the platform metrics (src/platform-metrics) read of the compute area: its rows, read by
 * its own stores, so another area names none of its tables.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { machineStore } from './machines/store.js';
import { suspensionStore } from './suspensions/store.js';

/** Which machines a series counts: of one cluster, of one region (the machine's location), or all. */
export interface MachineScope {
  cluster?: string | undefined;
  region?: string | undefined;
}

/** How many of the workspace's machines (of one cluster or region, or all) were alive at each second of `ats`. */
export const machinesAliveAt = (db: Kysely<DB>, workspaceId: string, ats: readonly number[], scope: MachineScope | string | undefined) => machineStore.aliveAt(db, workspaceId, ats, scopeOf(scope));

/** The suspensions (of one cluster or region, or all) that overlap (from, until]: [start, end), weighing their monthly cost in cents. */
export const suspensionSpans = (db: Kysely<DB>, workspaceId: string, from: number, until: number, scope: MachineScope | string | undefined) =>
  suspensionStore.overlapping(db, workspaceId, from, until, scopeOf(scope));

/** A bare string is a cluster (the older callers' form). */
const scopeOf = (scope: MachineScope | string | undefined): MachineScope => (typeof scope === 'string' ? { cluster: scope } : (scope ?? {}));
