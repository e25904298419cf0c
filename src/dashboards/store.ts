import { sql, type Kysely } from 'kysely';
import type { DashboardRevisionsTable, DashboardsTable } from './tables.js';
import type { DB } from '../db/tables.js';
import { ifEtag } from '../db/database.js';

/** The content columns a dashboard shows from its current revision. */
export type ContentColumns = Pick<DashboardRevisionsTable, 'name' | 'description' | 'purpose' | 'filter_definitions' | 'default_filter_values' | 'widgets'>;

/** A dashboard's head with its current revision's number and content. */
export type DashboardView = DashboardsTable & ContentColumns & { seq: number };

function view(db: Kysely<DB>) {
  return db
    .selectFrom('dashboards as d')
    .innerJoin('dashboard_revisions as r', 'r.id', 'd.current_revision_id')
    .select([
      'd.id',
      'd.workspace_id',
      'd.current_revision_id',
      'd.etag',
      'd.created_at',
      'd.updated_at',
      'r.seq',
      'r.name',
      'r.description',
      'r.purpose',
      'r.filter_definitions',
      'r.default_filter_values',
      'r.widgets',
    ]);
}

export const dashboardStore = {
  /** A new dashboard: its head first (the revision references it), then its first revision. */
  async insert(db: Kysely<DB>, head: DashboardsTable, first: DashboardRevisionsTable): Promise<void> {
    await db.insertInto('dashboards').values(head).execute();
    await db.insertInto('dashboard_revisions').values(first).execute();
  },

  insertRevision: (db: Kysely<DB>, row: DashboardRevisionsTable) => db.insertInto('dashboard_revisions').values(row).execute(),

  get: (db: Kysely<DB>, workspaceId: string, id: string): Promise<DashboardView | undefined> => view(db).where('d.workspace_id', '=', workspaceId).where('d.id', '=', id).executeTakeFirst(),

  page: (db: Kysely<DB>, workspaceId: string, limit: number, beforeId: string | null): Promise<DashboardView[]> => {
    let q = view(db).where('d.workspace_id', '=', workspaceId);
    if (beforeId) q = q.where('d.id', '<', beforeId);
    return q.orderBy('d.id', 'desc').limit(limit).execute();
  },

  /**
   * Locks the dashboard for the rest of the transaction and reads it. The lock is a write (a
   * no-op UPDATE): a row lock on PostgreSQL, the write lock on SQLite, so concurrent writers
   * with one If-Match run one after the other and only the first finds its etag current.
   */
  lock: async (db: Kysely<DB>, workspaceId: string, id: string): Promise<DashboardView | undefined> => {
    const res = await db
      .updateTable('dashboards')
      .set({ etag: sql`etag` })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return undefined;
    return view(db).where('d.id', '=', id).executeTakeFirst();
  },

  setHead: (db: Kysely<DB>, id: string, head: Pick<DashboardsTable, 'current_revision_id' | 'etag' | 'updated_at'>) => db.updateTable('dashboards').set(head).where('id', '=', id).execute(),

  /** Conditional delete (any etag for `*`); its revisions go with it (ON DELETE CASCADE). */
  deleteIf: async (db: Kysely<DB>, workspaceId: string, id: string, expected: string): Promise<boolean> => {
    const q = db.deleteFrom('dashboards').where('workspace_id', '=', workspaceId).where('id', '=', id).$call(ifEtag(expected));
    return Number((await q.executeTakeFirst()).numDeletedRows) > 0;
  },

  exists: async (db: Kysely<DB>, workspaceId: string, id: string): Promise<boolean> =>
    (await db.selectFrom('dashboards').select('id').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst()) !== undefined,

  etag: async (db: Kysely<DB>, workspaceId: string, id: string): Promise<string | undefined> =>
    (await db.selectFrom('dashboards').select('etag').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst())?.etag,

  revision: (db: Kysely<DB>, workspaceId: string, dashboardId: string, id: string) =>
    db.selectFrom('dashboard_revisions').selectAll().where('workspace_id', '=', workspaceId).where('dashboard_id', '=', dashboardId).where('id', '=', id).executeTakeFirst(),

  /** Newest first by number, keyset below `beforeSeq`: the (dashboard_id, seq) index answers it. */
  revisions: (db: Kysely<DB>, workspaceId: string, dashboardId: string, limit: number, beforeSeq: number | null) => {
    let q = db.selectFrom('dashboard_revisions').selectAll().where('dashboard_id', '=', dashboardId).where('workspace_id', '=', workspaceId);
    if (beforeSeq !== null) q = q.where('seq', '<', beforeSeq);
    return q.orderBy('seq', 'desc').limit(limit).execute();
  },
};
