import type { Kysely } from 'kysely';

/**
 * Events (docs/spec-gaps.md, "Events and the audit log"): one row per write, secret access and sign-in, inserted in the
 * transaction of the change it describes. `workspace_id` is null for a user's own events (a
 * sign-in, a session ended) that belong to no workspace. Ids are time-ordered, so the audit
 * log pages newest first by id; the indexes serve its filters and the retention purge.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('credential_id', 'text')
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_workspace').on('events').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('events_workspace_type').on('events').columns(['workspace_id', 'type', 'id']).execute();
  await db.schema.createIndex('events_workspace_resource').on('events').columns(['workspace_id', 'resource_id', 'id']).execute();
  await db.schema.createIndex('events_workspace_actor').on('events').columns(['workspace_id', 'actor_id', 'id']).execute();
  await db.schema.createIndex('events_created').on('events').column('created_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
