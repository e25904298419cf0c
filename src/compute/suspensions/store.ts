import type { Kysely, Updateable } from 'kysely';
import type { ComputeSuspensionsTable, SuspensionState } from '../tables.js';
import type { DB } from '../../db/tables.js';
import { forUpdate, type Engine } from '../../db/database.js';

export const suspensionStore = {
  insert: (db: Kysely<DB>, row: ComputeSuspensionsTable) => db.insertInto('compute_suspensions').values(row).execute(),

  get: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('compute_suspensions').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  byId: (db: Kysely<DB>, id: string) => db.selectFrom('compute_suspensions').selectAll().where('id', '=', id).executeTakeFirst(),

  getLocked: (db: Kysely<DB>, engine: Engine, workspaceId: string, id: string) =>
    forUpdate(engine, db.selectFrom('compute_suspensions').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst(),

  /** The workspace's machines that are suspended now, newest first. */
  active: (db: Kysely<DB>, workspaceId: string) =>
    db.selectFrom('compute_suspensions').selectAll().where('workspace_id', '=', workspaceId).where('state', '=', 'active').orderBy('id', 'desc').execute(),

  /**
   * Active suspensions that are due something: a notice not yet sent (7 days or 1 day
   * left) or the end of their retention.
   */
  due: (db: Kysely<DB>, now: number, infoBefore: number, warningBefore: number, limit: number) =>
    db
      .selectFrom('compute_suspensions')
      .selectAll()
      .where('state', '=', 'active')
      .where((eb) =>
        eb.or([
          eb.and([eb('expires_at', '<=', now + infoBefore), eb('notices_sent', '<', 1)]),
          eb.and([eb('expires_at', '<=', now + warningBefore), eb('notices_sent', '<', 2)]),
          eb('expires_at', '<=', now),
        ]),
      )
      .orderBy('expires_at')
      .limit(limit)
      .execute(),

  /**
   * Expired suspensions whose snapshot the provider may still hold: their machine still
   * records it (the deletion is not confirmed yet).
   */
  expiredWithSnapshot: (db: Kysely<DB>, limit: number) =>
    db
      .selectFrom('machines as m')
      .innerJoin('compute_suspensions as s', (j) => j.onRef('s.machine_id', '=', 'm.id').onRef('s.snapshot_id', '=', 'm.snapshot_id'))
      .selectAll('s')
      .where('m.status', '=', 'expired')
      .where('m.snapshot_id', 'is not', null)
      .where('s.state', '=', 'expired')
      .orderBy('s.id')
      .limit(limit)
      .execute(),

  /** Compare-and-swap on the state, as for machines. */
  transition: async (db: Kysely<DB>, id: string, from: SuspensionState, set: Updateable<ComputeSuspensionsTable>): Promise<boolean> => {
    const res = await db.updateTable('compute_suspensions').set(set).where('id', '=', id).where('state', '=', from).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /** Every suspension a machine ever had: they go with it when it is deleted. */
  deleteForMachine: (db: Kysely<DB>, machineId: string) => db.deleteFrom('compute_suspensions').where('machine_id', '=', machineId).execute(),

  /** Records that the notices up to `level` went out; never lowers it. */
  noteNotices: (db: Kysely<DB>, id: string, level: number) => db.updateTable('compute_suspensions').set({ notices_sent: level }).where('id', '=', id).where('notices_sent', '<', level).execute(),

  /** Suspensions that overlap (from, until], as spans: from when the machine was suspended until it was resumed, expired or deleted, weighing their monthly cost. */
  async overlapping(
    db: Kysely<DB>,
    workspaceId: string,
    from: number,
    until: number,
    scope: { cluster?: string | undefined; region?: string | undefined },
  ): Promise<{ start: number; end: number | null; weight: number }[]> {
    let q = db
      .selectFrom('compute_suspensions')
      .select(['created_at', 'ended_at', 'monthly_cost_cents'])
      .where('workspace_id', '=', workspaceId)
      .where('created_at', '<=', until)
      .where((eb) => eb.or([eb('ended_at', 'is', null), eb('ended_at', '>', from)]));
    if (scope.cluster) q = q.where('cluster_id', '=', scope.cluster);
    if (scope.region) q = q.where('location', '=', scope.region);
    return (await q.execute()).map((s) => ({ start: s.created_at, end: s.ended_at, weight: Number(s.monthly_cost_cents) }));
  },
};
