import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { ChangeRequestState, RepositoryChangeRequestsTable } from '../tables.js';

export const changeRequestStore = {
  insert: (db: Kysely<DB>, row: RepositoryChangeRequestsTable) => db.insertInto('repository_change_requests').values(row).execute(),

  get: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('repository_change_requests').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  byId: (db: Kysely<DB>, id: string) => db.selectFrom('repository_change_requests').selectAll().where('id', '=', id).executeTakeFirst(),

  /** Newest first, keyset below `beforeId` (ids are time-ordered). */
  page: (db: Kysely<DB>, workspaceId: string, f: { installId?: string | undefined; state?: ChangeRequestState | undefined }, limit: number, beforeId: string | null) => {
    let q = db.selectFrom('repository_change_requests').selectAll().where('workspace_id', '=', workspaceId);
    if (f.installId !== undefined) q = q.where('install_id', '=', f.installId);
    if (f.state !== undefined) q = q.where('state', '=', f.state);
    if (beforeId !== null) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },

  /** The install's open change requests (one at most, by the rule; a list so that a broken rule is mended, not hidden). */
  openOf: (db: Kysely<DB>, installId: string) => db.selectFrom('repository_change_requests').selectAll().where('install_id', '=', installId).where('state', '=', 'open').orderBy('number').execute(),

  /** Merged change requests whose head `main` may not hold yet: the branch move owed after their commit. Oldest first. */
  unlanded: (db: Kysely<DB>, installId: string) =>
    db.selectFrom('repository_change_requests').select(['id', 'head_commit_sha']).where('install_id', '=', installId).where('state', '=', 'merged').where('landed', '=', 0).orderBy('number').execute(),

  /** Moves a change request only if it is still in `from` with the etag read: false otherwise. */
  transition: async (
    db: Kysely<DB>,
    id: string,
    from: { state: ChangeRequestState; etag: string },
    to: Partial<Omit<RepositoryChangeRequestsTable, 'id' | 'workspace_id' | 'install_id' | 'number' | 'created_at'>>,
  ): Promise<boolean> => {
    const res = await db.updateTable('repository_change_requests').set(to).where('id', '=', id).where('state', '=', from.state).where('etag', '=', from.etag).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  },

  update: (db: Kysely<DB>, id: string, to: Partial<Omit<RepositoryChangeRequestsTable, 'id' | 'workspace_id' | 'install_id' | 'number' | 'created_at'>>) =>
    db.updateTable('repository_change_requests').set(to).where('id', '=', id).execute(),

  approvals: (db: Kysely<DB>, ids: readonly string[]) =>
    ids.length === 0 ? Promise.resolve([]) : db.selectFrom('repository_change_request_approvals').selectAll().where('change_request_id', 'in', ids).orderBy('approved_at').orderBy('user_id').execute(),

  /** True when the approval is new; approving twice keeps the first. */
  approve: async (db: Kysely<DB>, id: string, userId: string, at: number): Promise<boolean> => {
    const res = await db
      .insertInto('repository_change_request_approvals')
      .values({ change_request_id: id, user_id: userId, approved_at: at })
      .onConflict((oc) => oc.columns(['change_request_id', 'user_id']).doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0n) > 0;
  },
};
