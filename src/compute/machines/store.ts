import type { Kysely, Updateable } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { MachinesTable, MachineStatus } from '../tables.js';
import { forUpdate, type Engine } from '../../db/database.js';
import { idFloor } from '../../shared/ids.js';

/** A machine's life: [start, end), end null while it lasts; its cluster and region, if known. */
export interface MachineLife {
  start: number;
  end: number | null;
  cluster: string | null;
  region: string | null;
}

export const machineStore = {
  insert: (db: Kysely<DB>, row: MachinesTable) => db.insertInto('machines').values(row).execute(),

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
  transition: async (db: Kysely<DB>, id: string, from: MachineStatus, set: Updateable<MachinesTable>, suspensionId?: string): Promise<boolean> => {
    let q = db.updateTable('machines').set(set).where('id', '=', id).where('status', '=', from);
    if (suspensionId !== undefined) q = q.where('suspension_id', '=', suspensionId);
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  /** Gone for good (its deletion confirmed at the provider), only from `deleting`. */
  deleteDeleting: async (db: Kysely<DB>, id: string): Promise<boolean> => {
    const res = await db.deleteFrom('machines').where('id', '=', id).where('status', '=', 'deleting').executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  },

  update: (db: Kysely<DB>, id: string, set: Updateable<MachinesTable>) => db.updateTable('machines').set(set).where('id', '=', id).execute(),

  /**
   * The lives of the workspace's machines that overlap (from, until]: each from its row (while it
   * exists) or from the event log (machines deleted since): created at its row's or its
   * `machine.created` event's time, ended by `machine.deleted`, or when its row went to failed or
   * expired. Only what can hold a point of the range is read: rows not ended before `from`, the
   * deletions since `from` (and those of machines whose rows remain), and the creations of the
   * machines deleted since `from`; a workspace's older history costs nothing (it made each series
   * slower by the hour under the soak: every machine event since the workspace began was read).
   * The event log is the machinery's table (src/db/tables.ts); this area reads its own machines'
   * events there (test/architecture/tables.test.ts allows it).
   */
  async lives(db: Kysely<DB>, workspaceId: string, from: number, until: number, scope: { cluster?: string | undefined; region?: string | undefined }): Promise<MachineLife[]> {
    const { cluster, region } = scope;
    let rows = db
      .selectFrom('machines')
      .select(['id', 'created_at', 'updated_at', 'status', 'cluster_id', 'location'])
      .where('workspace_id', '=', workspaceId)
      .where('created_at', '<=', until)
      .where((eb) => eb.or([eb('status', 'not in', ['failed', 'expired']), eb('updated_at', '>', from)]));
    if (cluster) rows = rows.where('cluster_id', '=', cluster);
    if (region) rows = rows.where('location', '=', region);
    const machineIds = db.selectFrom('machines').select('id').where('workspace_id', '=', workspaceId);
    const since = idFloor('evt', (from - 1) * 1000);
    const deletedSince = db
      .selectFrom('events')
      .select('resource_id')
      .where('workspace_id', '=', workspaceId)
      .where('type', '=', 'machine.deleted')
      .where('id', '>=', since)
      .where('created_at', '>', from);
    const deletions = await db
      .selectFrom('events')
      .select(['resource_id', 'created_at'])
      .where('workspace_id', '=', workspaceId)
      .where('type', '=', 'machine.deleted')
      .where('created_at', '<=', until)
      .where((eb) => eb.or([eb.and([eb('id', '>=', since), eb('created_at', '>', from)]), eb('resource_id', 'in', machineIds)]))
      .orderBy('id')
      .execute();
    const creations = await db
      .selectFrom('events')
      .select(['resource_id', 'created_at', 'data'])
      .where('workspace_id', '=', workspaceId)
      .where('type', '=', 'machine.created')
      .where('created_at', '<=', until)
      .where('resource_id', 'in', deletedSince)
      .where('resource_id', 'not in', machineIds)
      .execute();
    const lives = new Map<string, MachineLife>();
    for (const m of await rows.execute()) {
      const ended = m.status === 'failed' || m.status === 'expired' ? m.updated_at : null;
      lives.set(m.id, { start: m.created_at, end: ended, cluster: m.cluster_id, region: m.location });
    }
    // Events add the machines deleted since, and the end of those being deleted now.
    for (const e of creations) {
      if (lives.has(e.resource_id)) continue;
      const data = JSON.parse(e.data) as { cluster_id?: string; location?: string };
      lives.set(e.resource_id, { start: e.created_at, end: null, cluster: data.cluster_id ?? null, region: data.location ?? null });
    }
    for (const e of deletions) {
      const life = lives.get(e.resource_id);
      if (life) life.end = e.created_at;
    }
    // A machine known only from its events is counted when its cluster (region) is asked for only
    // if the event named it (machine.created names its location since issue 52).
    return [...lives.values()].filter((l) => (!cluster || l.cluster === cluster) && (!region || l.region === region) && (l.end === null || l.end > from));
  },
};
