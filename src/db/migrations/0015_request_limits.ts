import type { Kysely } from 'kysely';

/**
 * The general rate limit (docs/spec-gaps.md, "Token scopes", WSP_RATE_LIMIT_PER_MINUTE) counted in the database, so
 * that every server instance shares it: one row per credential and per workspace, its requests
 * (`failures`, the column name the window counters share) in the current one-minute window.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('request_limits')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('request_limits_window').on('request_limits').column('window_start').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
