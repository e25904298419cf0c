import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { OperationsTable } from './tables.js';

export const operationStore = {
  insert: (db: Kysely<DB>, row: OperationsTable) => db.insertInto('operations').values(row).execute(),

  get: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('operations').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  /** Marks an operation done once; a second completion (a retried job) changes nothing. */
  complete: async (db: Kysely<DB>, id: string, now: number, outcome: { result: unknown } | { error: { code: number; message: string } }): Promise<boolean> => {
    const res = await db
      .updateTable('operations')
      .set({
        done: 1,
        result: 'result' in outcome ? JSON.stringify(outcome.result ?? {}) : null,
        error: 'error' in outcome ? JSON.stringify(outcome.error) : null,
        updated_at: now,
      })
      .where('id', '=', id)
      .where('done', '=', 0)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },
};
