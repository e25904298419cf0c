import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { InstallsTable, RenderState } from './tables.js';

export type InstallView = InstallsTable & {
  desired_semver: string;
  current_semver: string | null;
  /** The newest render (number `render_seq`); null before the first. */
  last_render_id: string | null;
  last_render_state: RenderState | null;
  last_render_message: string | null;
  /** The open change request of the install (one at most); null when none waits. */
  open_change_request_id: string | null;
};

/**
 * The name a deleted install or package is moved aside to, so that a new one may take the
 * name it had under the table's UNIQUE(workspace_id, name) (docs/decisions.md, "Deleting
 * installs and packages"): it starts with a control character, which no name the API accepts
 * may hold (DisplayName), and ends with the row's id, unique by itself.
 */
export const asideName = (id: string) => `\u0001deleted ${id}`;

/** Live installs only: a deleted one reads 404 everywhere and leaves every list. */
function view(db: Kysely<DB>) {
  return db
    .selectFrom('installs as i')
    .where('i.deleted_at', 'is', null)
    .innerJoin('package_versions as dv', 'dv.id', 'i.desired_version_id')
    .leftJoin('package_versions as cv', 'cv.id', 'i.current_version_id')
    .leftJoin('renders as lr', (join) => join.onRef('lr.install_id', '=', 'i.id').onRef('lr.seq', '=', 'i.render_seq'))
    .selectAll('i')
    .select(['dv.semver as desired_semver', 'cv.semver as current_semver', 'lr.id as last_render_id', 'lr.state as last_render_state', 'lr.message as last_render_message'])
    .select((eb) =>
      eb
        .selectFrom('repository_change_requests as ocr')
        .select('ocr.id')
        .whereRef('ocr.install_id', '=', 'i.id')
        .where('ocr.state', '=', 'open')
        .orderBy('ocr.number', 'desc')
        .limit(1)
        .as('open_change_request_id'),
    );
}

export const installStore = {
  insert: (db: Kysely<DB>, row: InstallsTable) => db.insertInto('installs').values(row).execute(),

  /** The install with the semvers of its versions: what the API shows. */
  get: (db: Kysely<DB>, workspaceId: string, id: string): Promise<InstallView | undefined> => view(db).where('i.workspace_id', '=', workspaceId).where('i.id', '=', id).executeTakeFirst(),

  page: (db: Kysely<DB>, workspaceId: string, limit: number, beforeId: string | null, clusterId?: string): Promise<InstallView[]> => {
    let q = view(db).where('i.workspace_id', '=', workspaceId);
    if (clusterId !== undefined) q = q.where('i.cluster_id', '=', clusterId);
    if (beforeId) q = q.where('i.id', '<', beforeId);
    return q.orderBy('i.id', 'desc').limit(limit).execute();
  },

  /**
   * Locks the install for the rest of the transaction and reads it. The lock is taken by a
   * write (a no-op UPDATE), so it is a row lock on PostgreSQL and the write lock at once on
   * SQLite: every change to an install, its render queue and its branch happens under it.
   */
  lock: async (db: Kysely<DB>, id: string): Promise<InstallView | undefined> => {
    const res = await db
      .updateTable('installs')
      .set({ etag: sql`etag` })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return undefined;
    return view(db).where('i.id', '=', id).executeTakeFirst();
  },

  update: (db: Kysely<DB>, id: string, fields: Partial<Omit<InstallsTable, 'id' | 'workspace_id' | 'created_at'>>) => db.updateTable('installs').set(fields).where('id', '=', id).execute(),

  /** The `required_approvals` of installs, deleted ones too (their change requests stay readable). */
  requiredApprovals: async (db: Kysely<DB>, ids: readonly string[]): Promise<Map<string, number>> => {
    if (ids.length === 0) return new Map();
    const rows = await db.selectFrom('installs').select(['id', 'required_approvals']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r.required_approvals]));
  },

  /** Whether the install existed and was deleted: its renders then have no repository to read. */
  isDeleted: async (db: Kysely<DB>, id: string): Promise<boolean> =>
    (await db.selectFrom('installs').select('id').where('id', '=', id).where('deleted_at', 'is not', null).executeTakeFirst()) !== undefined,

  /** The workspace's live installs on a cluster: the first `limit` ids (oldest first) and their number. */
  async onCluster(db: Kysely<DB>, workspaceId: string, clusterId: string, limit: number): Promise<{ ids: string[]; count: number }> {
    const live = db.selectFrom('installs').where('workspace_id', '=', workspaceId).where('cluster_id', '=', clusterId).where('deleted_at', 'is', null);
    const ids = (await live.select('id').orderBy('id').limit(limit).execute()).map((r) => r.id);
    const count = ids.length < limit ? ids.length : Number((await live.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n);
    return { ids, count };
  },

  /** The workspace's live installs of a package, oldest first: what keeps it from being deleted. */
  idsUsingPackage: async (db: Kysely<DB>, workspaceId: string, packageId: string): Promise<string[]> =>
    (await db.selectFrom('installs').select('id').where('workspace_id', '=', workspaceId).where('package_id', '=', packageId).where('deleted_at', 'is', null).orderBy('id').execute()).map((r) => r.id),

  /**
   * What the workspace's repositories take on disk together, as last measured (after each
   * render and repository maintenance), leaving out `exceptId`'s: the figure that
   * WSP_QUOTA_WORKSPACE_REPOSITORY_BYTES bounds.
   */
  repositoryBytesTotal: async (db: Kysely<DB>, workspaceId: string, exceptId?: string): Promise<number> => {
    let q = db
      .selectFrom('installs')
      .select((eb) => eb.fn.sum<number | string | null>('repository_bytes').as('n'))
      .where('workspace_id', '=', workspaceId);
    if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
    return Number((await q.executeTakeFirstOrThrow()).n ?? 0);
  },

  /** Every live install of every workspace, by id after `afterId`: for work on all repositories. */
  idsAfter: (db: Kysely<DB>, afterId: string, limit: number) => db.selectFrom('installs').select('id').where('id', '>', afterId).where('deleted_at', 'is', null).orderBy('id').limit(limit).execute(),

  /** Installs of a package that follow new versions on their own. */
  followingUpdates: (db: Kysely<DB>, workspaceId: string, packageId: string): Promise<InstallView[]> =>
    view(db).where('i.workspace_id', '=', workspaceId).where('i.package_id', '=', packageId).where('i.automatic_updates_enabled', '=', 1).execute(),
};
