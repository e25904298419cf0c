import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Issue 50 (docs/spec-gaps.md, "Roles (issue 50)"): the `viewer` role. The role column's CHECK of 0001 named three roles;
 * PostgreSQL changes a constraint in place, SQLite cannot (no ALTER of a constraint), so there the
 * table is rebuilt: no table references memberships and no trigger watches it, so dropping the old
 * one with foreign keys on loses nothing.
 */
const ROLES = sql`role in ('owner', 'admin', 'member', 'viewer')`;

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // PostgreSQL named 0001's column constraint `<table>_<column>_check`.
    await sql`alter table memberships drop constraint if exists memberships_role_check`.execute(db);
    await sql`alter table memberships add constraint memberships_role_check check (${ROLES})`.execute(db);
    return;
  }
  // Kysely runs SQLite's migrations outside a transaction (no transactional DDL, it says): the
  // rebuild is one, so no reader ever finds the table missing.
  await (db.isTransaction ? rebuild(db) : db.transaction().execute(rebuild));
}

async function rebuild(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('memberships_new')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull().check(ROLES))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['workspace_id', 'user_id'])
    .execute();
  await sql`insert into memberships_new (workspace_id, user_id, role, created_at) select workspace_id, user_id, role, created_at from memberships`.execute(db);
  await db.schema.dropTable('memberships').execute();
  await sql`alter table memberships_new rename to memberships`.execute(db);
  await db.schema.createIndex('memberships_user').on('memberships').columns(['user_id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
