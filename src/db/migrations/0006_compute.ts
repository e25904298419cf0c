import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('clusters')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // One default cluster per workspace even when two first machines are created at once.
  await db.schema
    .createIndex('clusters_one_default')
    .on('clusters')
    .column('workspace_id')
    .unique()
    .where(sql<boolean>`is_default = 1`)
    .execute();

  await db.schema
    .createTable('compute_configs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('image', 'text', (c) => c.notNull())
    .addColumn('machine_type_filter', 'text', (c) => c.notNull())
    .addColumn('secret_id', 'text')
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('compute_configs_workspace').on('compute_configs').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('machines')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('compute_config_id', 'text', (c) => c.notNull())
    .addColumn('cluster_id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('server_type', 'text', (c) => c.notNull())
    .addColumn('location', 'text', (c) => c.notNull())
    .addColumn('image', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('provider_server_id', 'bigint')
    .addColumn('ipv4', 'text')
    .addColumn('snapshot_id', 'bigint')
    .addColumn('suspension_id', 'text')
    .addColumn('operation_id', 'text')
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('machines_workspace').on('machines').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('machines_config').on('machines').columns(['compute_config_id', 'status']).execute();

  await db.schema
    .createTable('compute_suspensions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('machine_id', 'text', (c) => c.notNull())
    .addColumn('cluster_id', 'text', (c) => c.notNull())
    .addColumn('server_type', 'text', (c) => c.notNull())
    .addColumn('location', 'text', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('snapshot_id', 'bigint', (c) => c.notNull())
    .addColumn('size_gb', 'double precision', (c) => c.notNull())
    .addColumn('monthly_cost_cents', 'double precision', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull().check(sql`reason in ('manual', 'downgrade')`))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('notices_sent', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema.createIndex('compute_suspensions_workspace').on('compute_suspensions').columns(['workspace_id', 'state', 'id']).execute();
  await db.schema.createIndex('compute_suspensions_expiry').on('compute_suspensions').columns(['state', 'expires_at']).execute();
  // A machine has at most one suspension that is not over.
  await db.schema
    .createIndex('compute_suspensions_one_open')
    .on('compute_suspensions')
    .column('machine_id')
    .unique()
    .where(sql<boolean>`state in ('active', 'resuming')`)
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
