import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { PackagesTable, PackageVersionsTable } from '../tables.js';

const SUMMARY = ['id', 'package_id', 'workspace_id', 'semver', 'created_at'] as const;

export const packageStore = {
  insert: (db: Kysely<DB>, row: PackagesTable) => db.insertInto('packages').values(row).execute(),

  /** A live package: a deleted one reads 404, and so do its versions through it. */
  get: (db: Kysely<DB>, workspaceId: string, id: string) =>
    db.selectFrom('packages').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst(),

  /**
   * Locks the live package for the rest of the transaction and reads it (a no-op UPDATE: a row
   * lock on PostgreSQL, the write lock on SQLite): a deletion and an install of it made at once
   * are one after the other, so no live install is ever left with a deleted package.
   */
  lock: async (db: Kysely<DB>, workspaceId: string, id: string): Promise<PackagesTable | undefined> => {
    const res = await db
      .updateTable('packages')
      .set({ etag: sql`etag` })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return undefined;
    return db.selectFrom('packages').selectAll().where('id', '=', id).executeTakeFirst();
  },

  update: (db: Kysely<DB>, id: string, fields: Partial<Omit<PackagesTable, 'id' | 'workspace_id' | 'created_at'>>) => db.updateTable('packages').set(fields).where('id', '=', id).execute(),

  /** Newest first (ids are time-ordered), keyset after `beforeId`; live packages only. */
  page: (db: Kysely<DB>, workspaceId: string, limit: number, beforeId: string | null) => {
    let q = db.selectFrom('packages').selectAll().where('workspace_id', '=', workspaceId).where('deleted_at', 'is', null);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },

  insertVersion: (db: Kysely<DB>, row: PackageVersionsTable) => db.insertInto('package_versions').values(row).execute(),

  /** A version of any package of the workspace: callers tell "unknown" from "another package's". */
  getVersion: (db: Kysely<DB>, workspaceId: string, id: string) => db.selectFrom('package_versions').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  pageVersions: (db: Kysely<DB>, workspaceId: string, packageId: string, limit: number, beforeId: string | null) => {
    let q = db.selectFrom('package_versions').select(SUMMARY).where('workspace_id', '=', workspaceId).where('package_id', '=', packageId);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },
};
