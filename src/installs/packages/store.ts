import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { PackagesTable, PackageVersionsTable } from '../tables.js';

const SUMMARY = ['id', 'package_id', 'workspace_id', 'semver', 'created_at'] as const;

export const packageStore = {
  insert: (db: Kysely<DB>, row: PackagesTable) => db.insertInto('packages').values(row).execute(),

  get: (db: Kysely<DB>, workspaceId: string, id: string) =>
    db.selectFrom('packages').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  /** Newest first (ids are time-ordered), keyset after `beforeId`. */
  page: (db: Kysely<DB>, workspaceId: string, limit: number, beforeId: string | null) => {
    let q = db.selectFrom('packages').selectAll().where('workspace_id', '=', workspaceId);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },

  insertVersion: (db: Kysely<DB>, row: PackageVersionsTable) => db.insertInto('package_versions').values(row).execute(),

  /** A version of any package of the workspace: callers tell "unknown" from "another package's". */
  getVersion: (db: Kysely<DB>, workspaceId: string, id: string) =>
    db.selectFrom('package_versions').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst(),

  pageVersions: (db: Kysely<DB>, workspaceId: string, packageId: string, limit: number, beforeId: string | null) => {
    let q = db.selectFrom('package_versions').select(SUMMARY).where('workspace_id', '=', workspaceId).where('package_id', '=', packageId);
    if (beforeId) q = q.where('id', '<', beforeId);
    return q.orderBy('id', 'desc').limit(limit).execute();
  },
};
