import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { SnippetsTable } from '../tables.js';
import { forUpdate, ifEtag, type Engine } from '../../db/database.js';

export type SnippetChanges = Partial<Pick<SnippetsTable, 'name' | 'source' | 'display_type' | 'state'>> & Pick<SnippetsTable, 'etag' | 'updated_at'>;

export const snippetStore = {
  insert: (db: Kysely<DB>, row: SnippetsTable) => db.insertInto('snippets').values(row).execute(),

  get: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('snippets').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  /** The workspace's snippets among `ids` (one query for a page of revisions). */
  byIds: (db: Kysely<DB>, workspaceId: string, ids: readonly string[]) =>
    ids.length === 0
      ? Promise.resolve([])
      : db
          .selectFrom('snippets')
          .select(['id', 'etag', 'state'])
          .where('workspace_id', '=', workspaceId)
          .where('id', 'in', [...ids])
          .execute(),

  /**
   * The same, locked until the transaction ends (PostgreSQL; SQLite writers are serialized
   * already): a snippet a restore found cannot be deleted under it.
   */
  lockByIds: (db: Kysely<DB>, engine: Engine, workspaceId: string, ids: readonly string[]) =>
    ids.length === 0
      ? Promise.resolve([])
      : forUpdate(
          engine,
          db
            .selectFrom('snippets')
            .select(['id', 'etag', 'state'])
            .where('workspace_id', '=', workspaceId)
            .where('id', 'in', [...ids]),
        ).execute(),

  /** Newest first (ids are time-ordered), keyset after `beforeId`. */
  page: (db: Kysely<DB>, workspaceId: string, limit: number, beforeId: string | null) => {
    let q = db.selectFrom('snippets').selectAll().where('workspace_id', '=', workspaceId);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },

  /** Conditional update: only while the etag is still `expected` (any etag for `*`). */
  updateIf: async (db: Kysely<DB>, workspaceId: string, id: string, expected: string, changes: SnippetChanges, opts: { onlyState?: SnippetsTable['state'] } = {}): Promise<boolean> => {
    let q = db.updateTable('snippets').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).$call(ifEtag(expected));
    if (opts.onlyState) q = q.where('state', '=', opts.onlyState);
    return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
  },

  deleteIf: async (db: Kysely<DB>, workspaceId: string, id: string, expected: string): Promise<boolean> => {
    const q = db.deleteFrom('snippets').where('workspace_id', '=', workspaceId).where('id', '=', id).$call(ifEtag(expected));
    return Number((await q.executeTakeFirst()).numDeletedRows) > 0;
  },
};
