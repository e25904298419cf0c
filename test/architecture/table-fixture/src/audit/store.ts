import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';

/** Allowed: a machinery table the check's allowance gives this area. */
export const auditStore = {
  page: (db: Kysely<DB>, workspaceId: string) => db.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId).execute(),
};
