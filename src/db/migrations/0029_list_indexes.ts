import type { Kysely } from 'kysely';

/**
 * Issue 54.4 (docs/decisions.md, "Every read through an index"): the lists whose page was sorted
 * from every matching row, found by test/db/query-plans.test.ts. Each index gives its list's
 * order, so a page reads its own rows and stops:
 * - a workspace's packages, newest first (only the unique (workspace_id, name) existed);
 * - a person's sessions, newest first (the index by last use serves the idle-expiry sweep);
 * - a workspace's largest repositories (the quota's answer names them), largest first;
 * - a person's own events (no workspace's), by them and about them, newest first: src/audit/store.ts
 *   merges the two searches. PostgreSQL does not take `workspace_id IS NULL` as an equality, so the
 *   (workspace_id, actor_id, id) index of 0016 did not give the id order there: these are partial;
 * - a workspace's clusters, newest first (0028 made only the unique (workspace_id, name));
 * - a change request's approvals in the order they were given (the key is (change_request_id, user_id)).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('packages_workspace').on('packages').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('sessions_user_id').on('sessions').columns(['user_id', 'id']).execute();
  for (const column of ['actor_id', 'resource_id']) {
    await db.schema
      .createIndex(`events_account_${column.replace('_id', '')}`)
      .on('events')
      .columns([column, 'id'])
      .where('workspace_id', 'is', null)
      .execute();
  }
  await db.schema.createIndex('clusters_workspace').on('clusters').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('repository_change_request_approvals_order').on('repository_change_request_approvals').columns(['change_request_id', 'approved_at', 'user_id']).execute();
  await db.schema.createIndex('installs_repository_bytes').on('installs').columns(['workspace_id', 'repository_bytes desc', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
