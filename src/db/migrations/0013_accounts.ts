import type { Kysely } from 'kysely';

/**
 * Accounts and sign-in (docs/spec-gaps.md, "Accounts and sign-in"): a user's email as a sign-in key (unique, compared
 * lower-cased), a password hash, OpenID Connect subjects linked to users, the CSRF token of
 * each session (for cookie sessions), failed sign-in counters, invitations, and the state of
 * single sign-on logins under way.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('email_key', 'text').execute();
  await db.schema.alterTable('users').addColumn('password_hash', 'text').execute();
  // Existing users keep their email; when two differ only in case, the oldest gets it as its
  // sign-in key and the others none (an operator sets theirs: docs/spec-gaps.md).
  const users = (await db.selectFrom('users').select(['id', 'email']).where('email', 'is not', null).orderBy('created_at').orderBy('id').execute()) as { id: string; email: string }[];
  const taken = new Set<string>();
  for (const u of users) {
    const key = u.email.trim().toLowerCase();
    if (key === '' || taken.has(key)) continue;
    taken.add(key);
    await db.updateTable('users').set({ email_key: key }).where('id', '=', u.id).execute();
  }
  await db.schema.createIndex('users_email_key').on('users').column('email_key').unique().execute();

  await db.schema.alterTable('sessions').addColumn('csrf_token', 'text').execute();

  await db.schema
    .createTable('oidc_identities')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('oidc_identities_pk', ['issuer', 'subject'])
    .execute();

  await db.schema
    .createTable('sign_in_limits')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('accepted_at', 'bigint')
    .addColumn('accepted_by', 'text')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('invitations_workspace').on('invitations').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('invitations_email').on('invitations').columns(['email_key']).execute();

  await db.schema
    .createTable('oidc_logins')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('return_to', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
