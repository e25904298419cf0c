import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Snippets, dashboards and their revisions. A dashboard row is only a head: its content is
 * that of its current revision, so the two can never disagree.
 *
 * Revisions are immutable, and the database says so too: an UPDATE of a revision is refused,
 * and so is a DELETE while its dashboard exists. The one way a revision leaves the database is
 * with its dashboard (ON DELETE CASCADE runs after the dashboard row is gone, so the trigger
 * lets it through). Revisions reference their dashboard only, not the workspace: a workspace's
 * deletion reaches them through the dashboard, never before it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('snippets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('display_type', 'text')
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('active', 'archived')`))
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('snippets_workspace').on('snippets').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('dashboards')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    // No foreign key: the head and its first revision reference each other, and they are
    // written together in one transaction.
    .addColumn('current_revision_id', 'text', (c) => c.notNull())
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dashboards_workspace').on('dashboards').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('dashboard_revisions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('dashboard_id', 'text', (c) => c.notNull().references('dashboards.id').onDelete('cascade'))
    // 1, 2, ... per dashboard: the keyset of the revision list (newest first).
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('parent_revision_id', 'text', (c) => c.references('dashboard_revisions.id'))
    .addColumn('restored_from_revision_id', 'text', (c) => c.references('dashboard_revisions.id'))
    .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('manual', 'automatic', 'restore', 'reset', 'backfill')`))
    .addColumn('author_id', 'text', (c) => c.notNull())
    .addColumn('summary', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('purpose', 'text', (c) => c.notNull().check(sql`purpose in ('workspace_overview', 'custom')`))
    .addColumn('filter_definitions', 'text', (c) => c.notNull())
    .addColumn('default_filter_values', 'text', (c) => c.notNull())
    .addColumn('widgets', 'text', (c) => c.notNull())
    .addColumn('structural_diff', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('dashboard_revisions_dashboard_seq', ['dashboard_id', 'seq'])
    .execute();

  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`
      create function dashboard_revisions_immutable() returns trigger language plpgsql as $$
      begin
        if tg_op = 'UPDATE' then
          raise exception 'dashboard revisions are immutable';
        end if;
        if tg_op = 'TRUNCATE' then
          raise exception 'dashboard revisions are deleted only with their dashboard';
        end if;
        if exists (select 1 from dashboards where id = old.dashboard_id) then
          raise exception 'dashboard revisions are deleted only with their dashboard';
        end if;
        return old;
      end
      $$`.execute(db);
    await sql`create trigger dashboard_revisions_immutable before update or delete on dashboard_revisions
      for each row execute function dashboard_revisions_immutable()`.execute(db);
    await sql`create trigger dashboard_revisions_no_truncate before truncate on dashboard_revisions
      for each statement execute function dashboard_revisions_immutable()`.execute(db);
  } else {
    await sql`create trigger dashboard_revisions_no_update before update on dashboard_revisions
      begin select raise(abort, 'dashboard revisions are immutable'); end`.execute(db);
    await sql`create trigger dashboard_revisions_no_delete before delete on dashboard_revisions
      when exists (select 1 from dashboards where id = old.dashboard_id)
      begin select raise(abort, 'dashboard revisions are deleted only with their dashboard'); end`.execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
