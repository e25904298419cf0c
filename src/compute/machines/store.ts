import type { Kysely, Updateable } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { MachinesTable, MachineStatus } from '../tables.js';
import { forUpdate, inTransaction, type Engine } from '../../db/database.js';
import { keepPrefixSums, prefixSumsAt, type PrefixSums } from '../../db/prefix-sums.js';

/**
 * A machine lives (counts in `machines_running`) while its status is one of these: from its
 * creation until it fails, expires or its deletion is asked for (docs/spec-gaps.md, "Platform
 * metrics and the console").
 */
const ALIVE: ReadonlySet<MachineStatus> = new Set(['creating', 'running', 'suspending', 'suspended', 'resuming']);

/** The running sum of the machines alive, kept by their status changes (migration 0035). */
const MACHINE_LIVES: PrefixSums = { table: 'machine_life_prefix', at: 'at', period: null };

/** The keys of machine_life_prefix a machine is counted under. */
export function lifeKeys(cluster: string | null, region: string | null): string[] {
  const keys = ['*'];
  if (cluster !== null) keys.push(`c:${cluster}`);
  if (region !== null) keys.push(`r:${region}`);
  if (cluster !== null && region !== null) keys.push(`cr:${cluster}:${region}`);
  return keys;
}

/** The key that counts a series' scope (cluster ids hold no colon). */
function lifeKeyOf({ cluster, region }: { cluster?: string | undefined; region?: string | undefined }): string {
  if (cluster && region) return `cr:${cluster}:${region}`;
  if (cluster) return `c:${cluster}`;
  if (region) return `r:${region}`;
  return '*';
}

/** A machine's life starting (+1) or ending (-1) at second `at`, in the caller's transaction. */
const keepLife = (trx: Kysely<DB>, m: Pick<MachinesTable, 'workspace_id' | 'cluster_id' | 'location'>, at: number, delta: 1 | -1) =>
  keepPrefixSums(
    trx,
    MACHINE_LIVES,
    m.workspace_id,
    at,
    lifeKeys(m.cluster_id, m.location).map((key) => ({ key, delta })),
  );

export const machineStore = {
  /** Its life starts with it, in the same transaction. */
  insert: (db: Kysely<DB>, row: MachinesTable) =>
    inTransaction(db, async (trx) => {
      await trx.insertInto('machines').values(row).execute();
      if (ALIVE.has(row.status)) await keepLife(trx, row, row.created_at, 1);
    }),

  get: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('machines').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  /** For jobs, which act for no caller. */
  byId: (db: Kysely<DB>, id: string) => db.selectFrom('machines').selectAll().where('id', '=', id).executeTakeFirst(),

  getLocked: (db: Kysely<DB>, engine: Engine, workspaceId: string, id: string) =>
    forUpdate(engine, db.selectFrom('machines').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst(),

  /** Newest first (ids are time-ordered), keyset after `beforeId`. */
  page: (db: Kysely<DB>, workspaceId: string, limit: number, beforeId: string | null, clusterId?: string) => {
    let q = db.selectFrom('machines').selectAll().where('workspace_id', '=', workspaceId);
    if (clusterId !== undefined) q = q.where('cluster_id', '=', clusterId);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },

  /**
   * Moves a machine on only from the status the caller expects (compare-and-swap), so a
   * job run twice, or racing another, changes it once. False when it was not in `from`.
   */
  transition: async (db: Kysely<DB>, id: string, from: MachineStatus, set: Updateable<MachinesTable> & { updated_at: number }, suspensionId?: string): Promise<boolean> => {
    const move = (trx: Kysely<DB>) => {
      let q = trx.updateTable('machines').set(set).where('id', '=', id).where('status', '=', from);
      if (suspensionId !== undefined) q = q.where('suspension_id', '=', suspensionId);
      return q;
    };
    const to = set.status ?? from;
    if (ALIVE.has(from) === ALIVE.has(to)) return Number((await move(db).executeTakeFirst()).numUpdatedRows) > 0;
    // Its life ends (or starts again) at this change, in the same transaction.
    return inTransaction(db, async (trx) => {
      const moved = await move(trx).returning(['workspace_id', 'cluster_id', 'location']).executeTakeFirst();
      if (!moved) return false;
      await keepLife(trx, moved, set.updated_at, ALIVE.has(to) ? 1 : -1);
      return true;
    });
  },

  /** Gone for good (its deletion confirmed at the provider), only from `deleting`. */
  deleteDeleting: async (db: Kysely<DB>, id: string): Promise<boolean> => {
    const res = await db.deleteFrom('machines').where('id', '=', id).where('status', '=', 'deleting').executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },

  /** Anything but its status, which `transition` moves (a machine's life follows it). */
  update: (db: Kysely<DB>, id: string, set: Omit<Updateable<MachinesTable>, 'status'>) => db.updateTable('machines').set(set).where('id', '=', id).execute(),

  /**
   * How many of the workspace's machines (of one cluster, region, or both) were alive at the end
   * of each second of `ats`: one search each of the running sum their status changes keep, however
   * many lived before.
   */
  aliveAt: (db: Kysely<DB>, workspaceId: string, ats: readonly number[], scope: { cluster?: string | undefined; region?: string | undefined }): Promise<number[]> =>
    prefixSumsAt(db, MACHINE_LIVES, workspaceId, lifeKeyOf(scope), ats),
};
