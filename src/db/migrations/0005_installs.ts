import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('packages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('packages_workspace_name', ['workspace_id', 'name'])
    .execute();

  await db.schema
    .createTable('package_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('package_id', 'text', (c) => c.notNull().references('packages.id').onDelete('cascade'))
    .addColumn('semver', 'text', (c) => c.notNull())
    .addColumn('files', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // Published versions are immutable: one set of files per semver, ever.
    .addUniqueConstraint('package_versions_package_semver', ['package_id', 'semver'])
    .execute();
  await db.schema.createIndex('package_versions_package').on('package_versions').columns(['package_id', 'id']).execute();

  await db.schema
    .createTable('installs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('package_id', 'text', (c) => c.notNull().references('packages.id'))
    .addColumn('desired_version_id', 'text', (c) => c.notNull().references('package_versions.id'))
    .addColumn('current_version_id', 'text', (c) => c.references('package_versions.id'))
    .addColumn('values_json', 'text', (c) => c.notNull())
    .addColumn('automatic_updates_enabled', 'integer', (c) => c.notNull())
    // The last render number given out, and the number of the render current_version came from.
    .addColumn('render_seq', 'integer', (c) => c.notNull())
    .addColumn('current_render_seq', 'integer', (c) => c.notNull())
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('installs_workspace_name', ['workspace_id', 'name'])
    .execute();
  await db.schema.createIndex('installs_package').on('installs').columns(['package_id']).execute();
  await db.schema.createIndex('installs_workspace').on('installs').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('renders')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('install_id', 'text', (c) => c.notNull().references('installs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('package_version_id', 'text', (c) => c.notNull().references('package_versions.id'))
    .addColumn('values_json', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('render_hash', 'text')
    .addColumn('tree_sha', 'text')
    .addColumn('commit_sha', 'text')
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('restored_from_render_id', 'text', (c) => c.references('renders.id'))
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('renders_install_seq', ['install_id', 'seq'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
