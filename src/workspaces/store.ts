import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { ifEtag } from '../db/database.js';

export const workspaceStore = {
  /** The workspaces a user belongs to, with the user's role. */
  forUser: (db: Kysely<DB>, userId: string) =>
    db
      .selectFrom('memberships')
      .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
      .select(['workspaces.id', 'workspaces.name', 'workspaces.etag', 'workspaces.created_at', 'workspaces.updated_at', 'memberships.role'])
      .where('memberships.user_id', '=', userId)
      .orderBy('workspaces.id', 'desc')
      .execute(),

  get: (db: Kysely<DB>, id: string) => db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst(),

  /** Conditional rename: only if the etag is still `expected` (or unconditionally for `*`). */
  rename: async (db: Kysely<DB>, id: string, name: string, expected: string, etag: string, now: number): Promise<boolean> => {
    const res = await db.updateTable('workspaces').set({ name, etag, updated_at: now }).where('id', '=', id).$call(ifEtag(expected)).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },
};
