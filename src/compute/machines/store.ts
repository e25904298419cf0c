import type { Kysely, Updateable } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { MachinesTable, MachineStatus } from '../tables.js';
import { forUpdate, type Engine } from '../../db/database.js';

export const machineStore = {
  insert: (db: Kysely<DB>, row: MachinesTable) => db.insertInto('machines').values(row).execute(),

  get: (db: Kysely<DB>, workspaceId: string, id: string) =>
    db.selectFrom('machines').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  /** For jobs, which act for no caller. */
  byId: (db: Kysely<DB>, id: string) => db.selectFrom('machines').selectAll().where('id', '=', id).executeTakeFirst(),

  getLocked: (db: Kysely<DB>, engine: Engine, workspaceId: string, id: string) =>
    forUpdate(engine, db.selectFrom('machines').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst(),

  /** Newest first (ids are time-ordered), keyset after `beforeId`. */
  page: (db: Kysely<DB>, workspaceId: string, limit: number, beforeId: string | null) => {
    let q = db.selectFrom('machines').selectAll().where('workspace_id', '=', workspaceId);
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
};
