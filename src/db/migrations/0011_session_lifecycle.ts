import type { Kysely } from 'kysely';

/**
 * Sessions a person can see and end (docs/spec-gaps.md, "Accounts and sign-in"): how each was issued, from where, and a hard
 * end (`not_after`) for a device login approved with a JWT, which must not outlive that JWT. The
 * absolute lifetime itself (WSP_SESSION_MAX_DAYS from `created_at`) is configuration, applied
 * when a session is used, so changing it applies to every session.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sessions')
    .addColumn('issued_by', 'text', (c) => c.notNull().defaultTo('operator'))
    .execute();
  await db.schema.alterTable('sessions').addColumn('user_agent', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('ip', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('not_after', 'bigint').execute();
  // Sessions from before cannot tell how they were issued: they show `operator` (docs/spec-gaps.md).
  await db.schema.createIndex('sessions_user_idx').on('sessions').columns(['user_id', 'last_used_at']).ifNotExists().execute();
  await db.schema.alterTable('device_authorizations').addColumn('approver_not_after', 'bigint').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
