import type { Kysely } from 'kysely';

/**
 * Issue 48, the limits round (the file's name was reserved for it before its content was known).
 * Failed sign-ins are counted once the password has been checked, no longer before (40 parallel
 * right passwords from one address were refused as guesses); the checks under way are held as
 * places instead, so parallel guesses still get no more checks than the limit: `in_flight` is
 * how many places are taken now, `flight_at` when one was last taken (places of a process that
 * died mid-check are given back once none has been taken for a minute).
 * WSP_WORKSPACES_PER_USER and WSP_QUOTA_WORKSPACE_REPOSITORY_BYTES need no column: they count
 * memberships and installs' measured repositories.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sign_in_limits')
    .addColumn('in_flight', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('sign_in_limits')
    .addColumn('flight_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
