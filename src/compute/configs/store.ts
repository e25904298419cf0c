import type { Kysely } from 'kysely';
import type { ComputeConfigsTable, MachineStatus } from '../tables.js';
import type { DB } from '../../db/tables.js';
import { forUpdate, type Engine } from '../../db/database.js';

/** Machines in these states still need their config's provider account. */
const USING_STATES: MachineStatus[] = ['creating', 'running', 'suspending', 'suspended', 'resuming', 'deleting'];

export const computeConfigStore = {
  insert: (db: Kysely<DB>, row: ComputeConfigsTable) => db.insertInto('compute_configs').values(row).execute(),

  get: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('compute_configs').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  /** Read under a row lock, inside a transaction: serializes deletion against new machines. */
  getLocked: (db: Kysely<DB>, engine: Engine, workspaceId: string, id: string) =>
    forUpdate(engine, db.selectFrom('compute_configs').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst(),

  /** Newest first (ids are time-ordered), keyset after `beforeId`. */
  page: (db: Kysely<DB>, workspaceId: string, limit: number, beforeId: string | null) => {
    let q = db.selectFrom('compute_configs').selectAll().where('workspace_id', '=', workspaceId);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },

  /**
   * The machines that still need the config's provider account, oldest first, at most
   * `limit`: one under way or in use, or any (also `failed` or `expired`) whose server or
   * snapshot the provider still holds.
   */
  machinesUsing: async (db: Kysely<DB>, id: string, limit: number): Promise<string[]> => {
    const rows = await db
      .selectFrom('machines')
      .select('id')
      .where('compute_config_id', '=', id)
      .where((eb) => eb.or([eb('status', 'in', USING_STATES), eb('snapshot_id', 'is not', null), eb('provider_server_id', 'is not', null), eb('cleanup', 'is not', null)]))
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  },

  delete: (db: Kysely<DB>, id: string) => db.deleteFrom('compute_configs').where('id', '=', id).execute(),
};
