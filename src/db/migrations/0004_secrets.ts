import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('secrets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('version_seq', 'integer', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('wrapped_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('secrets_workspace_name', ['workspace_id', 'name'])
    .execute();
  await db.schema.createIndex('secrets_workspace').on('secrets').columns(['workspace_id', 'id']).execute();
  // The start check and rotation look for data keys wrapped by a given master key.
  await db.schema.createIndex('secrets_key').on('secrets').columns(['key_id', 'id']).execute();

  await db.schema
    .createTable('secret_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('secret_id', 'text', (c) => c.notNull().references('secrets.id').onDelete('cascade'))
    .addColumn('version_number', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('enabled', 'disabled', 'destroyed')`))
    .addColumn('comment', 'text')
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('ciphertext', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('destroyed_at', 'bigint')
    .addUniqueConstraint('secret_versions_number', ['secret_id', 'version_number'])
    // A destroyed version keeps no payload; any other keeps one.
    .addCheckConstraint('secret_versions_payload', sql`(state = 'destroyed') = (ciphertext is null)`)
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
