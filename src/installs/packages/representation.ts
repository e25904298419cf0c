import type { PackagesTable, PackageVersionsTable } from '../tables.js';
import type { Package, PackageVersion } from './schemas.js';

export const toPackage = (row: PackagesTable): Package => ({ id: row.id, workspace_id: row.workspace_id, name: row.name, created_at: row.created_at, etag: row.etag });

export const toVersion = (row: PackageVersionsTable): PackageVersion => ({
  id: row.id,
  package_id: row.package_id,
  workspace_id: row.workspace_id,
  semver: row.semver,
  files: JSON.parse(row.files) as Record<string, string>,
  created_at: row.created_at,
});
