import { sql, type Kysely } from 'kysely';

/**
 * Security round two (docs/spec-gaps.md, "Whose address is it"):
 * - `users.email_verified`: whether anyone proved the user controls their address. An account
 *   made by accepting an invitation without signing in proves nothing (the platform sends no
 *   email), so single sign-on never links to it and it never keeps the address from its proven
 *   owner. Existing users are taken as proven (made by an operator, the first-run setup, or a
 *   provider that vouched), except those the audit log shows were made by an invitation.
 * - `oidc_logins.browser_hash`: the SHA-256 of the cookie that binds a single sign-on to the
 *   browser that started it (RFC 9700 §4.7: login CSRF).
 * - `oidc_logins(expires_at)`: the purge of abandoned logins reads an index, not the table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update users set email_verified = 1 where email is not null`.execute(db);
  await sql`update users set email_verified = 0 where id in (
    select actor_id from events where type = 'invitation.accepted' and actor_id is not null and data like '%"new_user":true%')`.execute(db);
  await db.schema.alterTable('oidc_logins').addColumn('browser_hash', 'text').execute();
  await db.schema.createIndex('oidc_logins_expires').on('oidc_logins').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
