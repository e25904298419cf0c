import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import { newId } from '../../shared/ids.js';

/** Clusters are out of scope beyond this: each workspace's default one, made on first use. */
export const clusterStore = {
  get: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('clusters').select(['id']).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  /** The workspace's default cluster; two first machines at once still make only one. */
  async defaultFor(db: Kysely<DB>, workspaceId: string, now: number): Promise<string> {
    const find = () => db.selectFrom('clusters').select('id').where('workspace_id', '=', workspaceId).where('is_default', '=', 1).executeTakeFirst();
    const existing = await find();
    if (existing) return existing.id;
    await db
      .insertInto('clusters')
      .values({ id: newId('cl'), workspace_id: workspaceId, name: 'default', is_default: 1, created_at: now })
      .onConflict((oc) => oc.doNothing())
      .execute();
    return (await find())!.id;
  },
};
