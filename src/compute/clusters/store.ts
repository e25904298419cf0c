import { sql, type Kysely, type Updateable } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { ClustersTable, MachineStatus } from '../tables.js';
import { newId } from '../../shared/ids.js';
import { newEtag } from '../../shared/etag.js';

/** How many machines of a cluster are in each status (statuses with none are absent). */
export type StatusCounts = Partial<Record<MachineStatus, number>>;

export const clusterStore = {
  get: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('clusters').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  /**
   * Locks the cluster for the rest of the transaction and reads it. The lock is taken by a write
   * (a no-op UPDATE), as installs are locked (src/installs/store.ts): a row lock on PostgreSQL,
   * the write lock at once on SQLite. A machine or install placed on the cluster and the
   * cluster's deletion both take it first, so one of them sees the other's outcome.
   */
  lock: async (db: Kysely<DB>, workspaceId: string, id: string): Promise<ClustersTable | undefined> => {
    const res = await db
      .updateTable('clusters')
      .set({ etag: sql`etag` })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return undefined;
    return db.selectFrom('clusters').selectAll().where('id', '=', id).executeTakeFirst();
  },

  existing: async (db: Kysely<DB>, workspaceId: string, ids: string[]): Promise<Set<string>> =>
    ids.length === 0 ? new Set() : new Set((await db.selectFrom('clusters').select('id').where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute()).map((r) => r.id)),

  insert: (db: Kysely<DB>, row: ClustersTable) => db.insertInto('clusters').values(row).execute(),

  update: (db: Kysely<DB>, id: string, set: Updateable<ClustersTable>) => db.updateTable('clusters').set(set).where('id', '=', id).execute(),

  delete: (db: Kysely<DB>, id: string) => db.deleteFrom('clusters').where('id', '=', id).execute(),

  /** Newest first (ids are time-ordered), keyset after `beforeId`. */
  page: (db: Kysely<DB>, workspaceId: string, limit: number, beforeId: string | null) => {
    let q = db.selectFrom('clusters').selectAll().where('workspace_id', '=', workspaceId);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },

  /** The machines of each cluster by status: one grouped read for a page of clusters. */
  async machineCounts(db: Kysely<DB>, clusterIds: string[]): Promise<Map<string, StatusCounts>> {
    const out = new Map<string, StatusCounts>(clusterIds.map((id) => [id, {}]));
    if (clusterIds.length === 0) return out;
    const rows = await db
      .selectFrom('machines')
      .select(['cluster_id', 'status', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('cluster_id', 'in', clusterIds)
      .groupBy(['cluster_id', 'status'])
      .execute();
    for (const r of rows) out.get(r.cluster_id)![r.status] = Number(r.n);
    return out;
  },

  /** The cluster's machines, oldest first, at most `limit`: what keeps it from being deleted. */
  machineIds: async (db: Kysely<DB>, clusterId: string, limit: number): Promise<string[]> =>
    (await db.selectFrom('machines').select('id').where('cluster_id', '=', clusterId).orderBy('id').limit(limit).execute()).map((r) => r.id),

  machineCount: async (db: Kysely<DB>, clusterId: string): Promise<number> =>
    Number(
      (
        await db
          .selectFrom('machines')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('cluster_id', '=', clusterId)
          .executeTakeFirstOrThrow()
      ).n,
    ),

  /** The workspace's default cluster; two first machines at once still make only one. */
  async defaultFor(db: Kysely<DB>, workspaceId: string, now: number): Promise<string> {
    const find = () => db.selectFrom('clusters').select('id').where('workspace_id', '=', workspaceId).where('is_default', '=', 1).executeTakeFirst();
    const existing = await find();
    if (existing) return existing.id;
    await db
      .insertInto('clusters')
      .values({ id: newId('cl'), workspace_id: workspaceId, name: 'default', description: null, region: null, is_default: 1, etag: newEtag(), created_at: now, updated_at: now })
      .onConflict((oc) => oc.doNothing())
      .execute();
    return (await find())!.id;
  },
};
