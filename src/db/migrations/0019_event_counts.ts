import type { Kysely } from 'kysely';

/**
 * The events of each closed minute, counted once (src/events/minute-counts.ts): the
 * `writes` and `secret_accesses` series read these instead of every event of their range, whose
 * number grows with the traffic (under the soak a day's series read every event the hour wrote).
 * Minute `m` holds the events with `created_at` in (60·m, 60·m + 60]. `event_count_spans` says
 * which minutes of a workspace have been counted: every minute from `first_minute` to
 * `last_minute`, a minute without events having no row.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('event_counts')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('minute', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('event_counts_pk', ['workspace_id', 'minute', 'type'])
    .execute();
  await db.schema
    .createTable('event_count_spans')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey())
    .addColumn('first_minute', 'bigint', (c) => c.notNull())
    .addColumn('last_minute', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
